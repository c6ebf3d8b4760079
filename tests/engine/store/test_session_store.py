"""The sessions of the store: m006 indexes the history already on disk, pages
go by cursor, a session's status is its latest run's, and its totals come from
the usage its runs reported (cost unknown stays unknown)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from peewee import SqliteDatabase

from server.core.events import (
    Event,
    MessageAdded,
    ModelRequested,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolResult,
    UsageReported,
)
from server.engine.store import Store
from server.engine.store.migrations import MIGRATIONS
from server.engine.store.session_queries import BadCursor, match_expression


def _pre_m006(path: Path) -> SqliteDatabase:
    """A database as Sparrow left it before the sessions' index existed."""
    db = SqliteDatabase(str(path), pragmas={"journal_mode": "wal", "foreign_keys": 1})
    db.connect()
    db.execute_sql("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    for migration in MIGRATIONS[:5]:
        migration(db)
        db.execute_sql("INSERT INTO migrations VALUES (?, ?)", (migration.__name__, time.time()))
    assert MIGRATIONS[5].__name__ == "m006_sessions"
    return db


def _old_run(db: SqliteDatabase, folder: Path, session: str, run: str, events: list[Event],
             when: float, tail: str = "") -> None:
    transcript = folder / f"{run}.jsonl"
    lines = [e.to_json() for e in events]
    lines.insert(2, "{not json")  # a hand edit, or a crash mid-write
    transcript.write_text("\n".join(lines) + "\n" + tail)
    if not db.execute_sql("SELECT 1 FROM sessions WHERE id = ?", (session,)).fetchone():
        db.execute_sql("INSERT INTO sessions VALUES (?, '/w', ?, ?)", (session, events[0].task
                       if isinstance(events[0], RunStarted) else "", when))
    db.execute_sql(
        "INSERT INTO runs VALUES (?, ?, '/w', 't', 'old-model', 'completed', '', 2, 1, ?, ?, ?)",
        (run, session, str(transcript), when, when + 5),
    )


def _events(run: str, task: str, output: str, cost: float | None) -> list[Event]:
    return [
        RunStarted(run_id=run, seq=1, task=task, workspace="/w", model="old-model",
                   session_id="s"),
        MessageAdded(run_id=run, seq=2, index=0, message={"role": "user", "text": task}),
        ModelRequested(run_id=run, seq=3, turn=1, messages=1),
        TextDelta(run_id=run, seq=4, turn=1, text="Look"),
        TextDelta(run_id=run, seq=5, turn=1, text="ing."),
        MessageAdded(run_id=run, seq=6, index=1, message={"role": "assistant", "text": "Looking."}),
        ToolResult(run_id=run, seq=7, turn=1, call_id="c", tool="read_file", ok=True,
                   output=output),
        UsageReported(run_id=run, seq=8, turn=1, input_tokens=100, output_tokens=20,
                      cost_usd=cost),
        ModelRequested(run_id=run, seq=9, turn=2, messages=3),
        # A transcript from before messages were recorded: its answer is the deltas.
        TextDelta(run_id=run, seq=10, turn=2, text="The answer is "),
        TextDelta(run_id=run, seq=11, turn=2, text="photosynthesis."),
        RunFinished(run_id=run, seq=12, status="completed", reason="done", turns=2),
    ]


def test_m006_indexes_the_transcripts_written_before_it(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    db = _pre_m006(path)
    now = time.time()
    _old_run(db, tmp_path, "s-1", "r-1", _events("r-1", "Find the burrow", "the wombat digs",
                                                    0.25), now - 100)
    _old_run(db, tmp_path, "s-1", "r-2", _events("r-2", "And then", "ok", 0.5), now - 50,
             tail='{"type": "text_delta", "run_id": "r-2", "se')  # cut by a crash
    _old_run(db, tmp_path, "s-2", "r-3", _events("r-3", "Local model task", "fine", None), now)
    db.execute_sql("INSERT INTO sessions VALUES ('s-empty', '/w', '', ?)", (now,))
    db.close()

    store = Store(path)
    hit = store.search_sessions("wombat")
    assert [(h.session_id, h.run_id, h.seq, h.turn, h.kind) for h in hit] == [
        ("s-1", "r-1", 7, 1, "tool_output")
    ]
    assert [(h.run_id, h.kind) for h in store.search_sessions("burrow")] == [("r-1", "title"),
                                                                            ("r-1", "user")]
    answer = store.search_sessions("photosynthesis")
    assert {(h.run_id, h.seq, h.turn, h.kind) for h in answer} == {
        ("r-1", 10, 2, "assistant"), ("r-2", 10, 2, "assistant"), ("r-3", 10, 2, "assistant")
    }
    assert [h.kind for h in store.search_sessions("Looking")] == ["assistant"] * 3  # not deltas
    one = store.session_info("s-1")
    assert one is not None
    assert (one.tokens, one.cost, one.models, one.runs) == (240, 0.75, ("old-model",), 2)
    assert (one.status, one.last_run.id, one.ended_at) == ("completed", "r-2", now - 45)
    unknown = store.session_info("s-2")
    assert unknown is not None and unknown.cost is None and unknown.tokens == 120
    sessions, _ = store.sessions_page()
    assert [s.id for s in sessions] == ["s-2", "s-1"]  # a session with no run is not listed
    store.close()
    Store(path).close()  # opening again indexes nothing twice
    again = Store(path)
    assert len(again.search_sessions("wombat")) == 1
    again.close()


def test_pages_follow_the_cursor_newest_activity_first(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    ids = []
    for n in range(7):
        session = store.create_session(f"/w{n % 2}", f"task {n}")
        store.create_run(run_id=f"r-{n}", session_id=session, workspace=f"/w{n % 2}",
                         task=f"task {n}", model="m", transcript=tmp_path / f"r-{n}.jsonl")
        store.finish_run(f"r-{n}", status="completed", reason="", turns=1)
        ids.append(session)
    # A follow-up makes the oldest session the most recently active.
    store.create_run(run_id="r-again", session_id=ids[0], workspace="/w0", task="more",
                     model="other", transcript=tmp_path / "r-again.jsonl")
    seen, cursor = [], None
    while True:
        page, cursor = store.sessions_page(limit=3, cursor=cursor)
        seen += [s.id for s in page]
        if cursor is None:
            break
    assert seen == [ids[0], *reversed(ids[1:])]
    first = store.session_info(ids[0])
    assert first is not None and first.status == "running" and first.ended_at is None
    assert first.models == ("m", "other")
    only, cursor = store.sessions_page(workspace="/w1", limit=10)
    assert [s.id for s in only] == [ids[5], ids[3], ids[1]] and cursor is None
    for bad in ("nonsense", "W10=", "bm90IGpzb24"):
        with pytest.raises(BadCursor):
            store.sessions_page(cursor=bad)
    store.close()


def test_the_users_words_are_quoted_whatever_they_are() -> None:
    assert match_expression('foo"bar AND') == '"foo""bar" "AND"*'
    assert match_expression("  ") is None
    assert json.dumps(match_expression("NEAR(a b)")) == json.dumps('"NEAR(a" "b)"*')
    assert match_expression("x a") == '"x" "a"'  # one letter: a whole word, not a prefix


def test_a_batch_the_busy_database_refused_is_written_with_the_next(tmp_path: Path) -> None:
    import sqlite3

    from server.engine.store.session_index import SessionIndexer

    store = Store(tmp_path / "s.db")
    session = store.create_session("/w", "busy")
    store.create_run(run_id="r", session_id=session, workspace="/w", task="busy", model="m",
                     transcript=tmp_path / "r.jsonl")
    store.db.execute_sql("PRAGMA busy_timeout = 50")
    indexer = SessionIndexer(store.db, session, "r")
    other = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process writing, past the timeout
    indexer(ToolResult(run_id="r", seq=5, turn=1, call_id="c", tool="t", ok=True,
                       output="first narwhal"))
    indexer(UsageReported(run_id="r", seq=6, turn=1, input_tokens=7, cost_usd=0.5))
    indexer.flush()
    other.execute("ROLLBACK")
    other.close()
    assert store.search_sessions("narwhal") == []
    indexer(ToolResult(run_id="r", seq=7, turn=2, call_id="d", tool="t", ok=True,
                       output="second narwhal"))
    indexer(RunFinished(run_id="r", seq=8, status="completed", reason=""))
    assert sorted(h.seq for h in store.search_sessions("narwhal")) == [5, 7]
    info = store.session_info(session)
    assert info is not None and (info.tokens, info.cost) == (7, 0.5)
    store.close()


def test_snippets_mark_the_words_the_index_matched() -> None:
    from server.engine.store.snippets import Terms, snippet

    text = "Le café était fermé; " + " ".join(f"w{n}" for n in range(40)) + " CAFÉS again"
    marked = snippet(text, Terms(["cafe", "fer"], prefix=True))
    assert [s["text"] for s in marked if s["match"]] == ["café", "fermé"]
    assert "".join(s["text"] for s in marked).startswith("Le café était fermé; w0")
    assert marked[-1]["text"].endswith("w11…") and not marked[-1]["match"]
    late = snippet(text, Terms(["again"], prefix=False))
    assert late[0]["text"].startswith("…w26 ") and late[-1] == {"text": "again", "match": True}
    assert {"text": "again", "match": True} in late
    assert snippet("", Terms(["x"], prefix=False)) == []
    assert snippet("?!", Terms(["x"], prefix=False)) == [{"text": "?!", "match": False}]


def test_a_session_indexed_again_from_its_transcripts_counts_nothing_twice(
    tmp_path: Path,
) -> None:
    from server.engine.store.session_index import SessionIndexer, reindex_session

    store = Store(tmp_path / "s.db")
    session = store.create_session("/w", "the ocelot task")
    store.create_run(run_id="r", session_id=session, workspace="/w", task="t", model="m",
                     transcript=tmp_path / "r.jsonl")
    events = _events("r", "the ocelot task", "a margay too", 0.25)
    (tmp_path / "r.jsonl").write_text("".join(e.to_json() + "\n" for e in events))
    indexer = SessionIndexer(store.db, session, "r")
    for event in events[:7]:  # the process died before its last batch was written
        indexer(event)
    assert store.search_sessions("margay") == []
    reindex_session(store.db, session)
    reindex_session(store.db, session)
    assert [h.kind for h in store.search_sessions("margay")] == ["tool_output"]
    assert [h.kind for h in store.search_sessions("ocelot")] == ["title", "user"]
    info = store.session_info(session)
    assert info is not None and (info.tokens, info.cost) == (120, 0.25)
    store.close()
