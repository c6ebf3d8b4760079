"""A generated history for ``bench_sessions``: N sessions of two runs, each run
50 events in a real transcript, written straight into the run database (the
schema of the migrations, the rows in one transaction) and cached under
``~/.cache/sparrow-bench/`` by version and size: making the big one takes a
minute or two."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

from server.engine.store import Store

VERSION = "sessions-v3"
EVENTS_PER_RUN = 50
RUNS_PER_SESSION = 2
WORKSPACES = 20
SYLLABLES = [a + b for a in "bcdfghklmnprstvz" for b in ("a", "e", "i", "o", "u", "ar", "en")]


def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Text:
    """Words drawn Zipf-like from the vocabulary: a few very common, most rare."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words = vocabulary(rng)
        rng.shuffle(self.words)
        total, self.cumulative = 0.0, []
        for rank in range(1, len(self.words) + 1):
            total += 1.0 / rank
            self.cumulative.append(total)

    def __call__(self, low: int, high: int) -> str:
        count = self.rng.randint(low, high)
        return " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=count))


def _run_events(run: str, session: str, task: str, ts: float, text: Text) -> tuple[
    list[dict[str, Any]], list[tuple[int, int, str, str]]
]:
    """The run's events and its indexed pieces (seq, turn, kind, text)."""
    events: list[dict[str, Any]] = []
    pieces: list[tuple[int, int, str, str]] = []

    def add(kind: str, **fields: Any) -> int:
        events.append({"type": kind, "run_id": run, "seq": len(events) + 1,
                       "ts": ts + len(events) * 0.05, **fields})
        return len(events)

    add("run_started", task=task, workspace="/w", model="bench:model", session_id=session,
        model_reason="", context_window=200000, continues="")
    add("context_assembled", system="You are a bench.", tools=[], instructions="",
        instructions_cut=False, history=0, context_window=200000)
    pieces.append((add("message_added", index=0, message={"role": "user", "text": task}), 1,
                   "user", task))
    for turn in range(1, 6):
        add("model_requested", turn=turn, messages=turn * 3, attempt=1)
        parts = [text(3, 8) + " " for _ in range(3 if turn < 5 else 5)]
        for part in parts:
            add("text_delta", turn=turn, text=part)
        answer = "".join(parts).strip()
        last = turn == 5
        calls = [] if last else [{"id": f"c{turn}", "name": "read_file", "args": {"path": "x"}}]
        seq = add("message_added", index=turn * 3 - 2,
                  message={"role": "assistant", "text": answer, "tool_calls": calls})
        pieces.append((seq, turn, "assistant", answer))
        if not last:
            add("tool_requested", turn=turn, call_id=f"c{turn}", tool="read_file",
                args={"path": "x"}, risk="read")
            output = text(20, 60)
            seq = add("tool_result", turn=turn, call_id=f"c{turn}", tool="read_file", ok=True,
                      output=output, truncated=False, duration_ms=3)
            pieces.append((seq, turn, "tool_output", output))
        add("usage_reported", turn=turn, input_tokens=1000 * turn, cache_creation_input_tokens=0,
            cache_read_input_tokens=0, output_tokens=50, cost_usd=0.001 * turn)
    while len(events) < EVENTS_PER_RUN - 1:
        add("context_updated", turn=5, chars={}, tokens=5000, estimated_tokens=0)
    add("run_finished", status="completed", reason="the model gave its final answer", turns=5)
    return events, pieces


def generate(home: Path, sessions: int, seed: int = 7) -> None:
    """Write the history into ``home`` (a SPARROW_HOME layout)."""
    rng = random.Random(seed)
    text = Text(rng)
    state = home / "state"
    transcripts = state / "transcripts"
    transcripts.mkdir(parents=True, exist_ok=True)
    database = state / "sessions.db"
    Store(database).close()  # the schema, from the migrations
    now = time.time()
    session_rows, run_rows, text_rows = [], [], []
    for number in range(sessions):
        session = f"s-bench-{number:06d}"
        workspace = f"/home/user/project-{number % WORKSPACES}"
        started = now - (sessions - number) * 3000.0  # a year of history, oldest first
        title = text(4, 10)
        text_rows.append((session, f"r-bench-{number:06d}-0", 0, 0, "title", title))
        for index in range(RUNS_PER_SESSION):
            run = f"r-bench-{number:06d}-{index}"
            created = started + index * 600.0
            task = title if index == 0 else text(4, 12)
            events, pieces = _run_events(run, session, task, created, text)
            path = transcripts / f"{run}.jsonl"
            path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
            run_rows.append((run, session, workspace, task, "bench:model", "completed",
                             "the model gave its final answer", 5, 1, str(path), created,
                             created + EVENTS_PER_RUN * 0.05))
            text_rows += [(session, run, seq, turn, kind, body) for seq, turn, kind, body in pieces]
        tokens = RUNS_PER_SESSION * sum(1000 * t + 50 for t in range(1, 6))
        session_rows.append((session, workspace, title, started, '["bench:model"]', tokens,
                             RUNS_PER_SESSION * 0.015, started + (RUNS_PER_SESSION - 1) * 600.0))
    connection = sqlite3.connect(database)
    with connection:
        connection.executemany(
            "INSERT INTO sessions (id, workspace, title, created_at, models, tokens, cost, "
            "last_active) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", session_rows)
        connection.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               run_rows)
        connection.executemany(
            "INSERT INTO session_text (session_id, run_id, seq, turn, kind, body) "
            "VALUES (?, ?, ?, ?, ?, ?)", text_rows)
    connection.close()


def cached_history(sessions: int) -> Path:
    """A SPARROW_HOME holding a generated history of ``sessions`` sessions."""
    root = Path.home() / ".cache" / "sparrow-bench" / f"{VERSION}-{sessions}"
    if (root / "complete").exists():
        return root / "home"
    shutil.rmtree(root, ignore_errors=True)
    started = time.perf_counter()
    generate(root / "home", sessions)
    (root / "complete").write_text(f"{time.perf_counter() - started:.1f} s\n")
    return root / "home"


def sample_words(sessions: int, count: int, seed: int = 11) -> list[str]:
    """Words of the generated text, from the most common to the rarest."""
    text = Text(random.Random(7))  # the same vocabulary and ranks as ``generate``
    del sessions
    rng = random.Random(seed)
    ranks = sorted(rng.sample(range(len(text.words)), count))
    return [text.words[r] for r in ranks]
