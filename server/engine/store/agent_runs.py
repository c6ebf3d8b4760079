"""The table that says which agent started a run. It is the agents' own
(``server.engine.agents.records`` writes it), made here with IF NOT EXISTS
beside the migrated schema, because the session list reads it too: a session
names the agent of its first run, and that query must find the table in a
store no agent ever ran in."""

from __future__ import annotations

from peewee import SqliteDatabase

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS agent_runs (
        run_id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        trigger TEXT NOT NULL,
        fire_time REAL,
        created_at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS agent_runs_by_agent ON agent_runs (agent, created_at)",
)


def ensure_agent_runs(db: SqliteDatabase) -> None:
    with db.atomic():
        for statement in SCHEMA:
            db.execute_sql(statement)
