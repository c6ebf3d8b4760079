"""Crash safety: ``sparrow run`` killed with SIGKILL at random points of a run
(seeded: the seed is printed, and SPARROW_CRASH_SEED replays one) leaves

- a transcript whose every complete line is an event, in seq order from 1 (a
  torn last line is allowed, nothing else);
- a database that passes ``PRAGMA integrity_check``;
- a database that agrees with the transcripts: a run row for every transcript,
  and a finished row's status and turns those of its transcript's run_finished;
- and, once a store is opened again, the run (and so its session) ended as
  interrupted, with the transcript saying so in its last line.

The kill points spread over the run's whole life: before the process has a
run, then after each number of transcript lines, with a few milliseconds of
jitter so that a kill also lands between a line and the next write."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from server.core.events import FINAL_STATUSES, event_from_dict
from server.core.paths import Paths
from server.engine.store import Store
from tests.cli.test_cli import SPARROW

pytestmark = pytest.mark.slow

TRIALS = 32
SCRIPT = {
    "turns": [
        {
            "text": "I will write the notes in three files, one after another.",
            "tool_calls": [
                {"tool": "write_file", "args": {"path": "a.txt", "content": "alpha\n" * 20}},
                {"tool": "write_file", "args": {"path": "b.txt", "content": "beta\n" * 20}},
            ],
            "usage": {"input_tokens": 120, "output_tokens": 30},
        },
        {
            "text": "Now the third file, and a look at the folder.",
            "tool_calls": [
                {"tool": "write_file", "args": {"path": "c.txt", "content": "gamma\n" * 20}},
                {"tool": "list_dir", "args": {"path": "."}},
            ],
            "usage": {"input_tokens": 200, "output_tokens": 25},
        },
        {"text": "All three files are written: a.txt, b.txt and c.txt. Done."},
    ]
}


def _lines(path: Path) -> tuple[list[bytes], bytes]:
    """The complete lines of ``path`` and what follows the last newline."""
    data = path.read_bytes() if path.exists() else b""
    *complete, rest = data.split(b"\n")
    return complete, rest


def _events(path: Path, context: str) -> tuple[list[dict[str, Any]], bytes]:
    """Every complete line as an event (each must be one), and the torn rest."""
    complete, rest = _lines(path)
    events = []
    for number, line in enumerate(complete, start=1):
        try:
            event = event_from_dict(json.loads(line))
        except ValueError as exc:
            raise AssertionError(f"{context}: line {number} of {path.name}: {exc}") from exc
        events.append(event.to_dict())
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(events) + 1)), f"{context}: seqs {seqs}"
    return events, rest


def _rows(db: Path) -> dict[str, dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return {row["id"]: dict(row) for row in conn.execute("SELECT * FROM runs")}


def _check_killed(db: Path, transcripts: Path, run_id: str | None, context: str) -> None:
    """What a kill must leave, before anyone opens the store again."""
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)], context
    rows = _rows(db)
    by_transcript = {Path(r["transcript"]).name: r for r in rows.values()}
    for path in transcripts.glob("*.jsonl"):
        assert path.name in by_transcript, f"{context}: {path.name} has no run row"
    if run_id is None:
        return
    row = rows[run_id]
    events, _ = _events(Path(row["transcript"]), context)
    if row["status"] in FINAL_STATUSES:
        end = events[-1]
        assert end["type"] == "run_finished", context
        assert (end["status"], end["turns"]) == (row["status"], row["turns"]), context
    else:
        assert row["status"] == "running", context
        # Only the last line may end it (a death between that line and the row's update).
        ends = [i for i, e in enumerate(events) if e["type"] == "run_finished"]
        assert ends in ([], [len(events) - 1]), context


def _check_reopened(paths: Paths, run_id: str, context: str) -> None:
    """The next store to open ends the run, and its transcript with it."""
    store = Store(paths.database)
    try:
        info = store.get_run(run_id)
        assert info is not None and info.status in FINAL_STATUSES, context
        events, rest = _events(Path(info.transcript), context)
        assert rest == b"", f"{context}: a torn line is left after the closing"
        end = events[-1]
        assert end["type"] == "run_finished", context
        assert (end["status"], end["turns"]) == (info.status, info.turns), context
        finished = [e for e in events if e["type"] == "run_finished"]
        assert len(finished) == 1, context
        # The search index and the totals agree with the transcript (the live
        # index writes in batches; the closing indexes again what a death lost).
        usage = [e for e in events if e["type"] == "usage_reported"]
        tokens = sum(
            e["input_tokens"] + e["cache_creation_input_tokens"]
            + e["cache_read_input_tokens"] + e["output_tokens"]
            for e in usage
        )
        session = store.db.execute_sql(
            "SELECT tokens FROM sessions WHERE id = ?", (info.session_id,)
        ).fetchone()
        assert session[0] == tokens, f"{context}: the session's tokens are not its transcript's"
        tool_outputs = [e for e in events if e["type"] == "tool_result"]
        indexed = store.db.execute_sql(
            "SELECT COUNT(*) FROM session_text WHERE run_id = ? AND kind = 'tool_output'",
            (run_id,),
        ).fetchone()[0]
        assert indexed == len(tool_outputs), f"{context}: the index lacks tool outputs"
        last_of_session = store.session_runs(info.session_id)[-1]
        assert last_of_session.id == run_id and last_of_session.status == info.status, context
        if info.status != "completed":
            assert info.status == "interrupted" and "ended before" in info.reason, context
    finally:
        store.close()


def _kill_when(
    process: subprocess.Popen[bytes], transcripts: Path, before: set[str], lines: int, jitter: float
) -> bool:
    """SIGKILL ``process`` once its new transcript has ``lines`` lines (0: at once,
    after ``jitter``); False when it finished first."""
    deadline = time.monotonic() + 60
    path: Path | None = None
    while lines and process.poll() is None and time.monotonic() < deadline:
        if path is None:
            fresh = [p for p in transcripts.glob("*.jsonl") if p.name not in before]
            path = fresh[0] if fresh else None
        if path is not None and path.read_bytes().count(b"\n") >= lines:
            break
        time.sleep(0.002)
    time.sleep(jitter)
    if process.poll() is not None:
        return False
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    return True


def test_a_run_killed_at_random_points_leaves_consistent_records(
    paths: Paths, tmp_path: Path
) -> None:
    seed = int(os.environ.get("SPARROW_CRASH_SEED") or random.randrange(2**32))
    print(f"crash-safety seed: {seed} (SPARROW_CRASH_SEED={seed} replays it)")
    rng = random.Random(seed)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    transcripts = paths.transcripts

    def start(n: int) -> subprocess.Popen[bytes]:
        workspace = tmp_path / f"ws{n}"
        workspace.mkdir()
        return subprocess.Popen(
            [SPARROW, "run", "--script", str(script), "-w", str(workspace), "--json", "notes"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    # A whole run first: how many lines a run writes, and a finished run's record.
    assert start(0).wait(timeout=120) == 0
    (full,) = transcripts.glob("*.jsonl")
    total = full.read_bytes().count(b"\n")
    assert total > 20
    _check_killed(paths.database, transcripts, next(iter(_rows(paths.database))), "whole run")

    killed = 0
    seen = {"no run yet": 0, "whole lines": 0, "torn last line": 0}
    for trial in range(1, TRIALS + 1):
        # Kill points over the whole life: a quarter in start-up (by time: the
        # interpreter, the store's opening, the run's row), the rest after any line.
        lines = 0 if rng.random() < 0.25 else rng.randint(1, total)
        jitter = rng.uniform(0, 0.8) if lines == 0 else rng.choice([0, 0, rng.uniform(0, 0.005)])
        context = f"seed {seed}, trial {trial}: killed after {lines} lines + {jitter * 1000:.1f} ms"
        before_rows = set(_rows(paths.database))
        before = {p.name for p in transcripts.glob("*.jsonl")}
        process = start(trial)
        killed += _kill_when(process, transcripts, before, lines, jitter)
        new = set(_rows(paths.database)) - before_rows
        assert len(new) <= 1, context
        run_id = next(iter(new), None)
        _check_killed(paths.database, transcripts, run_id, context)
        if run_id is None:
            seen["no run yet"] += 1
        else:
            _, rest = _lines(Path(_rows(paths.database)[run_id]["transcript"]))
            seen["torn last line" if rest else "whole lines"] += 1
        if run_id is not None:
            _check_reopened(paths, run_id, context)
    print(f"{killed} of {TRIALS} runs killed; transcripts left: {seen}")
    assert killed >= TRIALS // 2, f"seed {seed}: most runs finished before their kill"

    # Whatever the kills, every run has ended and `sparrow runs` says how.
    listed = subprocess.run(
        [SPARROW, "runs", "--json", "--limit", "100"], capture_output=True, text=True, check=True
    ).stdout
    statuses = [json.loads(line)["status"] for line in listed.splitlines()]
    assert "running" not in statuses and "interrupted" in statuses
