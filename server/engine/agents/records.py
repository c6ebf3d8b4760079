"""What the store keeps about agents, in two tables of their own.

``agent_runs`` says which agent started a run (and whether by hand or at which
scheduled time): a table rather than a column of ``runs`` or a preference,
because the run list and ``sparrow agent list`` ask it by run and by agent,
and the schema of ``runs`` belongs to the migrations. ``agent_firings`` holds
one row per (agent, scheduled time); its primary key is the claim that lets
only one of several Sparrow processes start a given firing, and its latest
row per agent is the last scheduled time, from which missed ones are counted.

Both are created with IF NOT EXISTS: they are additions beside the migrated
schema. ``agent_firings`` is read only by this module; ``agent_runs`` also by
the session list (the agent of a session's first run), so its schema lives
with the store (``server.engine.store.agent_runs``)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass

from server.engine.store import Store
from server.engine.store.agent_runs import SCHEMA as AGENT_RUNS

SCHEMA = (
    *AGENT_RUNS,
    """CREATE TABLE IF NOT EXISTS agent_firings (
        agent TEXT NOT NULL,
        fire_time REAL NOT NULL,
        outcome TEXT NOT NULL,
        run_id TEXT,
        pid INTEGER NOT NULL,
        claimed_at REAL NOT NULL,
        PRIMARY KEY (agent, fire_time))""",
)

# The outcomes of a firing row.
STARTED = "started"
SKIPPED = "skipped"  # missed while closed, with missed: skip
BASELINE = "baseline"  # first seen: scheduled times count from here
FAILED = "failed"  # claimed, but the run could not start (the reason is in the log)


@dataclass(frozen=True)
class AgentRunRow:
    run_id: str
    agent: str
    trigger: str
    fire_time: float | None


class AgentRecords:
    def __init__(self, store: Store) -> None:
        self.store = store
        with store.db.atomic():
            for statement in SCHEMA:
                store.db.execute_sql(statement)

    def claim(self, agent: str, fire_time: float, outcome: str) -> bool:
        """True for the one process whose row went in: it alone acts on this firing."""
        cursor = self.store.db.execute_sql(
            "INSERT OR IGNORE INTO agent_firings (agent, fire_time, outcome, pid, claimed_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (agent, fire_time, outcome, os.getpid(), time.time()),
        )
        return bool(cursor.rowcount == 1)

    def prune(self, agent: str, before: float) -> None:
        """Forget the agent's firings older than ``before``: only the latest is ever
        read back, and an agent due every minute would add 1,440 rows a day."""
        self.store.db.execute_sql(
            "DELETE FROM agent_firings WHERE agent = ? AND fire_time < ?", (agent, before)
        )

    def settle(self, agent: str, fire_time: float, outcome: str, run_id: str | None) -> None:
        self.store.db.execute_sql(
            "UPDATE agent_firings SET outcome = ?, run_id = ? WHERE agent = ? AND fire_time = ?",
            (outcome, run_id, agent, fire_time),
        )

    def last_fire(self, agent: str) -> float | None:
        row = self.store.db.execute_sql(
            "SELECT MAX(fire_time) FROM agent_firings WHERE agent = ?", (agent,)
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def firings(self, agent: str) -> list[tuple[float, str, str | None]]:
        rows = self.store.db.execute_sql(
            "SELECT fire_time, outcome, run_id FROM agent_firings WHERE agent = ? "
            "ORDER BY fire_time",
            (agent,),
        ).fetchall()
        return [(float(t), str(o), r) for t, o, r in rows]

    def record_run(self, run_id: str, agent: str, trigger: str, fire_time: float | None) -> None:
        self.store.db.execute_sql(
            "INSERT INTO agent_runs (run_id, agent, trigger, fire_time, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (run_id, agent, trigger, fire_time, time.time()),
        )

    def runs_of(self, agent: str, limit: int = 20) -> list[AgentRunRow]:
        rows = self.store.db.execute_sql(
            "SELECT run_id, agent, trigger, fire_time FROM agent_runs WHERE agent = ? "
            "ORDER BY created_at DESC LIMIT ?",
            (agent, limit),
        ).fetchall()
        return [AgentRunRow(*row) for row in rows]

    def agents_of(self, run_ids: Iterable[str]) -> dict[str, str]:
        """Which agent started each of ``run_ids`` (those an agent started)."""
        ids = list(run_ids)
        found: dict[str, str] = {}
        for start in range(0, len(ids), 500):  # SQLite's limit on bound parameters
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            rows = self.store.db.execute_sql(
                f"SELECT run_id, agent FROM agent_runs WHERE run_id IN ({marks})", chunk
            ).fetchall()
            found.update({str(run_id): str(agent) for run_id, agent in rows})
        return found
