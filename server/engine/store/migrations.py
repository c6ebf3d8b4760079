"""Schema migrations: an ordered list of small named functions, each applied
once and recorded in the ``migrations`` table. Never edit one that has
shipped; add the next."""

from __future__ import annotations

import time
from collections.abc import Callable

from peewee import SqliteDatabase

Migration = Callable[[SqliteDatabase], None]


def m001_initial(db: SqliteDatabase) -> None:
    db.execute_sql(
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            workspace TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL
        )"""
    )
    db.execute_sql(
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            workspace TEXT NOT NULL,
            task TEXT NOT NULL,
            model TEXT NOT NULL,
            status TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            turns INTEGER NOT NULL DEFAULT 0,
            pid INTEGER NOT NULL,
            transcript TEXT NOT NULL,
            created_at REAL NOT NULL,
            finished_at REAL
        )"""
    )
    db.execute_sql("CREATE INDEX runs_created_at ON runs(created_at)")
    db.execute_sql("CREATE INDEX runs_session ON runs(session_id)")


def m002_checkpoints(db: SqliteDatabase) -> None:
    """The checkpoint index; the snapshots themselves live in shadow git repositories."""
    db.execute_sql(
        """
        CREATE TABLE checkpoints (
            id TEXT PRIMARY KEY,
            workspace TEXT NOT NULL,
            run_id TEXT NOT NULL,
            turn INTEGER NOT NULL,
            tool TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            commit_id TEXT NOT NULL,
            files_changed TEXT NOT NULL DEFAULT '[]',
            bytes_stored INTEGER NOT NULL DEFAULT 0,
            duration_ms INTEGER NOT NULL DEFAULT 0,
            skipped TEXT NOT NULL DEFAULT '[]'
        )"""
    )
    db.execute_sql("CREATE INDEX checkpoints_workspace ON checkpoints(workspace, created_at)")
    db.execute_sql("CREATE INDEX checkpoints_run ON checkpoints(run_id)")


def m003_permissions(db: SqliteDatabase) -> None:
    """Permission rules, with how often each decided a call; and preferences
    (the permission mode and the autonomy dial) shared by the app and the CLI."""
    db.execute_sql(
        """
        CREATE TABLE rules (
            id TEXT PRIMARY KEY,
            effect TEXT NOT NULL,
            tool TEXT NOT NULL,
            pattern TEXT,
            scope TEXT NOT NULL,
            workspace TEXT,
            session_id TEXT,
            provider TEXT,
            surface TEXT,
            source TEXT NOT NULL DEFAULT 'user',
            hits INTEGER NOT NULL DEFAULT 0,
            last_used_at REAL,
            created_at REAL NOT NULL
        )"""
    )
    db.execute_sql("CREATE INDEX rules_scope ON rules(scope, workspace, session_id)")
    db.execute_sql(
        "CREATE TABLE preferences (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
        "updated_at REAL NOT NULL)"
    )


def m004_checkpoint_baseline(db: SqliteDatabase) -> None:
    """Whether a checkpoint is its workspace's first (the baseline)."""
    db.execute_sql("ALTER TABLE checkpoints ADD COLUMN baseline INTEGER NOT NULL DEFAULT 0")


def m005_memory(db: SqliteDatabase) -> None:
    """Memory facts (``workspace`` NULL: global), one per key and scope, and a
    full-text index over key and value that triggers keep in step."""
    # AUTOINCREMENT: an id once forgotten is never another fact's, so a stale
    # `sparrow memory forget ID` cannot remove the wrong one.
    db.execute_sql(
        """
        CREATE TABLE facts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            workspace TEXT,
            updated_at REAL NOT NULL
        )"""
    )
    db.execute_sql("CREATE UNIQUE INDEX facts_scope_key ON facts(COALESCE(workspace, ''), key)")
    db.execute_sql("CREATE INDEX facts_updated ON facts(updated_at)")
    db.execute_sql(
        "CREATE VIRTUAL TABLE facts_fts USING fts5(key, value, content='facts', "
        "content_rowid='id', tokenize='unicode61 remove_diacritics 2')"
    )
    db.execute_sql(
        """
        CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
            INSERT INTO facts_fts(rowid, key, value) VALUES (new.id, new.key, new.value);
        END"""
    )
    db.execute_sql(
        """
        CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
            INSERT INTO facts_fts(facts_fts, rowid, key, value)
            VALUES ('delete', old.id, old.key, old.value);
        END"""
    )
    db.execute_sql(
        """
        CREATE TRIGGER facts_fts_update AFTER UPDATE ON facts BEGIN
            INSERT INTO facts_fts(facts_fts, rowid, key, value)
            VALUES ('delete', old.id, old.key, old.value);
            INSERT INTO facts_fts(rowid, key, value) VALUES (new.id, new.key, new.value);
        END"""
    )


def m006_sessions(db: SqliteDatabase) -> None:
    """What a session's list row and its search need: its models, tokens and
    cost (NULL: not known), the session it was resumed from, its last handoff
    doc and when it was last active; its status and end come from its latest
    run, not a copy. The text of its messages and tool outputs goes to a
    full-text index, one row per piece; the history already on disk is indexed
    here."""
    for column in (
        "models TEXT NOT NULL DEFAULT '[]'",
        "tokens INTEGER NOT NULL DEFAULT 0",
        "cost REAL",
        "cost_unknown INTEGER NOT NULL DEFAULT 0",
        "parent TEXT",
        "handoff TEXT",
        "last_active REAL NOT NULL DEFAULT 0",
    ):
        db.execute_sql(f"ALTER TABLE sessions ADD COLUMN {column}")
    db.execute_sql("CREATE INDEX sessions_active ON sessions(last_active, id)")
    db.execute_sql("CREATE INDEX sessions_workspace ON sessions(workspace, last_active, id)")
    db.execute_sql("CREATE INDEX runs_session_created ON runs(session_id, created_at, id)")
    db.execute_sql(
        """
        CREATE TABLE session_text (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            turn INTEGER NOT NULL,
            kind TEXT NOT NULL,
            body TEXT NOT NULL
        )"""
    )
    db.execute_sql("CREATE INDEX session_text_session ON session_text(session_id)")
    db.execute_sql(
        "CREATE VIRTUAL TABLE session_fts USING fts5(body, content='session_text', "
        "content_rowid='id', tokenize='unicode61 remove_diacritics 2', prefix='2 3')"
    )
    db.execute_sql(
        """
        CREATE TRIGGER session_fts_insert AFTER INSERT ON session_text BEGIN
            INSERT INTO session_fts(rowid, body) VALUES (new.id, new.body);
        END"""
    )
    db.execute_sql(
        """
        CREATE TRIGGER session_fts_delete AFTER DELETE ON session_text BEGIN
            INSERT INTO session_fts(session_fts, rowid, body) VALUES ('delete', old.id, old.body);
        END"""
    )
    # (The prefix indexes: a word being typed, two or three letters so far, is
    # found without reading every word that starts with them.)
    # The checkpoints a session's transcripts name: one named by another
    # session too survives this one's deletion.
    db.execute_sql(
        """
        CREATE TABLE session_checkpoints (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            checkpoint_id TEXT NOT NULL,
            PRIMARY KEY (session_id, checkpoint_id)
        ) WITHOUT ROWID"""
    )
    db.execute_sql(
        "CREATE INDEX session_checkpoints_checkpoint ON session_checkpoints(checkpoint_id)"
    )
    from server.engine.store.session_index import backfill

    backfill(db)


MIGRATIONS: list[Migration] = [
    m001_initial,
    m002_checkpoints,
    m003_permissions,
    m004_checkpoint_baseline,
    m005_memory,
    m006_sessions,
]


def apply_migrations(db: SqliteDatabase) -> list[str]:
    """Apply the migrations not yet recorded; return the names applied now."""
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    done = {row[0] for row in db.execute_sql("SELECT name FROM migrations").fetchall()}
    applied = []
    for migration in MIGRATIONS:
        name = migration.__name__
        if name in done:
            continue
        with db.atomic():
            migration(db)
            db.execute_sql(
                "INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
            )
        applied.append(name)
    return applied
