"""A run whose process died is ended as interrupted by the next process to open
the store, in the store and in its transcript alike; a run still going is not,
whoever now has the dead one's pid."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from server.engine.store import Store
from server.engine.store.store import INTERRUPTED
from server.engine.transcript import BadLine, read_transcript

# A process that starts a run, writes its transcript (``lines``, then ``torn``
# unterminated) and dies without finishing it.
DYING = """
import os, sys
from pathlib import Path
from server.engine.store import Store
db, transcript, lines, torn = sys.argv[1:5]
store = Store(Path(db))
session = store.create_session("/w", "t")
store.create_run(run_id="dead", session_id=session, workspace="/w", task="t",
                 model="demo", transcript=Path(transcript), surface="cli")
with open(transcript, "w") as handle:
    handle.write(lines + torn)
os._exit(0)
"""


def _event(kind: str, seq: int, **fields: object) -> str:
    return json.dumps({"type": kind, "run_id": "dead", "seq": seq, "ts": 1.0, **fields}) + "\n"


STARTED = _event("run_started", 1, task="t", workspace="/w", model="demo", session_id="s")
REQUESTED = _event("model_requested", 2, turn=3, messages=1)


def _die_running(db: Path, transcript: Path, lines: str, torn: str = "") -> None:
    subprocess.run(
        [sys.executable, "-c", DYING, str(db), str(transcript), lines, torn],
        check=True,
        env=os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )


def _events(transcript: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in transcript.read_text().splitlines()]


def test_a_dead_run_is_interrupted_and_its_transcript_says_so(tmp_path: Path) -> None:
    db, transcript = tmp_path / "s.db", tmp_path / "dead.jsonl"
    _die_running(db, transcript, STARTED + REQUESTED, torn='{"type": "text_delta", "run_id": "d')
    store = Store(db)
    info = store.get_run("dead")
    assert info is not None and info.status == INTERRUPTED
    assert "ended before the run finished" in info.reason and info.turns == 3
    assert info.finished_at is not None
    events = _events(transcript)  # the torn line is cut: every line parses
    assert [e["type"] for e in events] == ["run_started", "model_requested", "run_finished"]
    assert events[-1] | {"ts": 0} == {
        "type": "run_finished",
        "run_id": "dead",
        "seq": 3,
        "ts": 0,
        "status": INTERRUPTED,
        "reason": info.reason,
        "turns": 3,
    }
    assert not any(isinstance(e, BadLine) for e in read_transcript(transcript))
    store.close()
    Store(db).close()  # a second opening adds nothing
    assert len(_events(transcript)) == 3


def test_a_dead_runs_pid_taken_by_a_live_process_does_not_keep_it_running(
    tmp_path: Path,
) -> None:
    db, transcript = tmp_path / "s.db", tmp_path / "dead.jsonl"
    _die_running(db, transcript, STARTED)
    # The pid comes back as a live process's (ours): only the lock can tell.
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET pid = ? WHERE id = 'dead'", (os.getpid(),))
    store = Store(db)
    info = store.get_run("dead")
    assert info is not None and info.status == INTERRUPTED
    assert f"pid {os.getpid()}" in info.reason


def test_a_transcript_that_finished_gives_the_row_its_end(tmp_path: Path) -> None:
    db, transcript = tmp_path / "s.db", tmp_path / "dead.jsonl"
    finished = _event("run_finished", 2, status="completed", reason="done", turns=1)
    _die_running(db, transcript, STARTED + finished)
    info = Store(db).get_run("dead")
    assert info is not None and (info.status, info.reason, info.turns) == ("completed", "done", 1)
    assert len(_events(transcript)) == 2


def test_a_dead_run_without_a_transcript_gets_one_that_says_how_it_ended(
    tmp_path: Path,
) -> None:
    db, transcript = tmp_path / "s.db", tmp_path / "dead.jsonl"
    _die_running(db, transcript, "")
    transcript.unlink()
    Store(db)
    assert [(e["type"], e["seq"], e["status"]) for e in _events(transcript)] == [
        ("run_finished", 1, INTERRUPTED)
    ]


def test_runs_of_live_processes_stay_running(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = Store(db)
    session = store.create_session("/w")
    store.create_run(
        run_id="mine",
        session_id=session,
        workspace="/w",
        task="t",
        model="demo",
        transcript=tmp_path / "mine.jsonl",
    )
    store.close()
    reopened = Store(db)  # this process still holds the run's lock
    mine = reopened.get_run("mine")
    assert mine is not None and mine.status == "running"
    assert reopened.close_if_dead("mine") is False
    assert [r.id for r in reopened.running_on("/w")] == ["mine"]
    reopened.finish_run("mine", status="completed", reason="", turns=1)
    assert not reopened.locks.path("mine").exists()
