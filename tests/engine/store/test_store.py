import sqlite3
from pathlib import Path

from server.engine.store import Store, new_id
from server.engine.store.migrations import MIGRATIONS

EXPECTED_SCHEMA = {
    "migrations": ["name", "applied_at"],
    # Beside the migrations (server/engine/store/agent_runs.py): the session list reads it.
    "agent_runs": ["run_id", "agent", "trigger", "fire_time", "created_at"],
    "sessions": [
        "id",
        "workspace",
        "title",
        "created_at",
        "models",
        "tokens",
        "cost",
        "cost_unknown",
        "parent",
        "handoff",
        "last_active",
    ],
    "runs": [
        "id",
        "session_id",
        "workspace",
        "task",
        "model",
        "status",
        "reason",
        "turns",
        "pid",
        "transcript",
        "created_at",
        "finished_at",
    ],
    "checkpoints": [
        "id",
        "workspace",
        "run_id",
        "turn",
        "tool",
        "reason",
        "created_at",
        "commit_id",
        "files_changed",
        "bytes_stored",
        "duration_ms",
        "skipped",
        "baseline",
    ],
    "rules": [
        "id",
        "effect",
        "tool",
        "pattern",
        "scope",
        "workspace",
        "session_id",
        "provider",
        "surface",
        "source",
        "hits",
        "last_used_at",
        "created_at",
    ],
    "preferences": ["key", "value", "updated_at"],
    "facts": ["id", "key", "value", "workspace", "updated_at"],
    "sqlite_sequence": ["name", "seq"],  # facts' AUTOINCREMENT
    # The full-text index and the tables FTS5 keeps it in.
    "facts_fts": ["key", "value"],
    "facts_fts_data": ["id", "block"],
    "facts_fts_idx": ["segid", "term", "pgno"],
    "facts_fts_docsize": ["id", "sz"],
    "facts_fts_config": ["k", "v"],
    # m006: the sessions' searchable text, its index, and the checkpoints they name.
    "session_text": ["id", "session_id", "run_id", "seq", "turn", "kind", "body"],
    "session_fts": ["body"],
    "session_fts_data": ["id", "block"],
    "session_fts_idx": ["segid", "term", "pgno"],
    "session_fts_docsize": ["id", "sz"],
    "session_fts_config": ["k", "v"],
    "session_checkpoints": ["session_id", "checkpoint_id"],
}


def test_migrations_build_the_expected_schema_once(tmp_path: Path) -> None:
    db_path = tmp_path / "sessions.db"
    Store(db_path).close()
    Store(db_path).close()  # a second open applies nothing again
    conn = sqlite3.connect(db_path)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == set(EXPECTED_SCHEMA)
    for table, columns in EXPECTED_SCHEMA.items():
        assert [row[1] for row in conn.execute(f"PRAGMA table_info({table})")] == columns
    applied = [row[0] for row in conn.execute("SELECT name FROM migrations")]
    assert applied == [m.__name__ for m in MIGRATIONS]
    assert all(name.startswith(f"m{i:03d}_") for i, name in enumerate(applied, start=1))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_runs_are_recorded_finished_and_listed_newest_first(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    session = store.create_session("/w", title="t")
    for n in range(3):
        store.create_run(
            run_id=f"r-{n}",
            session_id=session,
            workspace=f"/w{n % 2}",
            task=f"t{n}",
            model="demo",
            transcript=tmp_path / f"r-{n}.jsonl",
        )
    store.finish_run("r-1", status="completed", reason="done", turns=4)
    info = store.get_run("r-1")
    assert info is not None and (info.status, info.turns, info.reason) == ("completed", 4, "done")
    assert info.finished_at is not None
    assert [r.id for r in store.recent_runs()] == ["r-2", "r-1", "r-0"]
    assert store.recent_workspaces() == ["/w0", "/w1"]
    assert store.get_run("nope") is None



def test_ids_made_in_a_burst_do_not_collide() -> None:
    """Ten thousand ids in a second or two (rules made by a script, say): with
    24 random bits three collide on average; with 40, one in twenty thousand
    bursts has any."""
    ids = [new_id("p") for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
