"""Reading and writing sessions and runs. The desktop app and CLI runs in other
processes share the database; WAL lets them read while one writes."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from peewee import SqliteDatabase

from server.core.redaction import redact
from server.engine.store.agent_runs import ensure_agent_runs
from server.engine.store.liveness import RunLocks
from server.engine.store.migrations import apply_migrations
from server.engine.store.orphans import close_transcript, read_end
from server.engine.store.records import MODELS, RunRecord, SessionRecord
from server.engine.store.session_index import clean, note_run, reindex_session
from server.engine.store.session_queries import SearchHit, SessionRow, one, page, search

# The status of a run whose process died before it finished (a crash, a kill, a
# power cut), set by the next Sparrow process to open the store.
INTERRUPTED = "interrupted"
INTERRUPTED_REASON = "the Sparrow process running it (pid {pid}) ended before the run finished"


def new_id(prefix: str) -> str:
    """Sortable by time, readable, and unique on one user's machine: 40 random
    bits a second (24 made two of 600 rules created in one second collide about
    once in a hundred)."""
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(5)}"


@dataclass(frozen=True)
class RunInfo:
    id: str
    session_id: str
    workspace: str
    task: str
    model: str
    status: str
    reason: str
    turns: int
    created_at: float
    finished_at: float | None
    transcript: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, row: RunRecord) -> RunInfo:
        return cls(
            id=row.id,
            session_id=row.session_id,
            workspace=row.workspace,
            task=row.task,
            model=row.model,
            status=row.status,
            reason=row.reason,
            turns=row.turns,
            created_at=row.created_at,
            finished_at=row.finished_at,
            transcript=row.transcript,
        )


@dataclass(frozen=True)
class SessionInfo:
    """A conversation: its first task is its title; its status and end are its
    latest run's."""

    id: str
    workspace: str
    title: str
    created_at: float
    runs: int
    last_run: RunInfo
    models: tuple[str, ...] = ()
    tokens: int = 0
    cost: float | None = None  # USD; None: not known (a model of unknown price)
    parent: str | None = None  # the session it was resumed from (its handoff doc)
    agent: str | None = None  # the agent that started it (its first run); None: a person

    @property
    def status(self) -> str:
        return self.last_run.status

    @property
    def ended_at(self) -> float | None:
        return None if self.last_run.status == "running" else self.last_run.finished_at

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workspace": self.workspace,
            "title": self.title,
            "models": list(self.models),
            "status": self.status,
            "tokens": self.tokens,
            "cost": self.cost,
            "started_at": self.created_at,
            "ended_at": self.ended_at,
            "parent": self.parent,
            "agent": self.agent,
            "created_at": self.created_at,
            "runs": self.runs,
            "last_run": self.last_run.to_dict(),
        }


class Store:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = SqliteDatabase(
            str(path),
            pragmas={
                "journal_mode": "wal",
                "foreign_keys": 1,
                "busy_timeout": 5000,
                "synchronous": "normal",
            },
        )
        self.locks = RunLocks(path.parent / "live")
        self.db.bind(MODELS)
        self.db.connect(reuse_if_open=True)
        apply_migrations(self.db)
        ensure_agent_runs(self.db)  # the session list reads it
        self._close_orphans()

    def close(self) -> None:
        if not self.db.is_closed():
            self.db.close()

    def _close_orphans(self) -> list[str]:
        """End the runs left 'running' by a process that no longer exists."""
        return [
            row.id
            for row in RunRecord.select().where(RunRecord.status == "running")
            if not self.locks.alive(row.id, row.pid) and self._close_dead(row)
        ]

    def close_if_dead(self, run_id: str) -> bool:
        """End ``run_id`` as interrupted when its process died; True when it did now."""
        row = RunRecord.get_or_none((RunRecord.id == run_id) & (RunRecord.status == "running"))
        if row is None or self.locks.alive(row.id, row.pid):
            return False
        return self._close_dead(row)

    def _close_dead(self, row: RunRecord) -> bool:
        """Record how a dead run ended, in the store and in its transcript alike.

        A transcript that already ends with ``run_finished`` (the process died
        between that line and its row) is the truth: the row takes its word.
        Otherwise the run is interrupted, and its transcript gets the closing
        event; only the process that wins the row's update writes it."""
        transcript = Path(row.transcript)
        end = read_end(transcript)
        reason = INTERRUPTED_REASON.format(pid=row.pid)
        status, turns = INTERRUPTED, end.turns if end else 0
        if end is not None and end.finished is not None:
            status = str(end.finished.get("status") or INTERRUPTED)
            reason = str(end.finished.get("reason") or "")
        changed = (
            RunRecord.update(
                status=status, reason=redact(reason), turns=turns, finished_at=time.time()
            )
            .where((RunRecord.id == row.id) & (RunRecord.status == "running"))
            .execute()
        )
        if changed and status == INTERRUPTED:
            # Unwritable: the store's word stands, and a replay just stops short.
            with contextlib.suppress(OSError):
                close_transcript(transcript, row.id, end, reason)
        if changed:
            # The live index writes in batches: a dead process may have lost its
            # last one, while its transcript has every event.
            reindex_session(self.db, row.session_id)
        return bool(changed)

    def create_session(self, workspace: str, title: str = "", *, parent: str | None = None) -> str:
        session_id = new_id("s")
        title = redact(title)[:200]
        now = time.time()
        with self.db.atomic():
            SessionRecord.create(id=session_id, workspace=workspace, title=title, created_at=now)
            self.db.execute_sql(
                "UPDATE sessions SET parent = ?, last_active = ? WHERE id = ?",
                (parent, now, session_id),
            )
            if title.strip():
                self.db.execute_sql(
                    "INSERT INTO session_text (session_id, run_id, seq, turn, kind, body) "
                    "VALUES (?, '', 0, 0, 'title', ?)",
                    (session_id, clean(title)),
                )
        return session_id

    def create_run(
        self,
        *,
        run_id: str,
        session_id: str,
        workspace: str,
        task: str,
        model: str,
        transcript: Path,
        surface: str = "api",
    ) -> RunInfo:
        # Locked before the row exists: no process can find it running and unlocked.
        self.locks.hold(run_id, surface)
        try:
            with self.db.atomic():
                row = RunRecord.create(
                    id=run_id,
                    session=session_id,
                    workspace=workspace,
                    task=redact(task),
                    model=model,
                    status="running",
                    pid=os.getpid(),
                    transcript=str(transcript),
                    created_at=time.time(),
                )
                note_run(self.db, session_id, run_id, model, row.created_at)
        except BaseException:
            self.locks.release(run_id)
            raise
        return RunInfo.of(row)

    def finish_run(self, run_id: str, *, status: str, reason: str, turns: int) -> None:
        RunRecord.update(
            status=status, reason=redact(reason), turns=turns, finished_at=time.time()
        ).where(
            RunRecord.id == run_id
        ).execute()
        # Released after the row is final: a reader never sees it running and unlocked.
        self.locks.release(run_id)

    def data_version(self) -> int:
        """A number that changes whenever another connection commits a change:
        a cheap way to notice other processes' writes without reading any table."""
        row = self.db.execute_sql("PRAGMA data_version").fetchone()
        return int(row[0])

    def runs_elsewhere(self, since: float | None = None) -> list[RunInfo]:
        """Runs of other processes, oldest first: those going now (``since`` None),
        or those started since ``since`` (on the index: cheap however long the history)."""
        found = RunRecord.status == "running" if since is None else RunRecord.created_at >= since
        query = (
            RunRecord.select()
            .where((RunRecord.pid != os.getpid()) & found)
            .order_by(RunRecord.created_at, RunRecord.id)
        )
        return [RunInfo.of(row) for row in query]

    def get_run(self, run_id: str) -> RunInfo | None:
        row = RunRecord.get_or_none(RunRecord.id == run_id)
        return RunInfo.of(row) if row is not None else None

    def recent_runs(self, limit: int = 50) -> list[RunInfo]:
        query = (
            RunRecord.select()
            .order_by(RunRecord.created_at.desc(), RunRecord.id.desc())
            .limit(limit)
        )
        return [RunInfo.of(row) for row in query]

    def latest_run_on(self, workspace: str) -> RunInfo | None:
        """The run most recently started on ``workspace`` (its resolved path)."""
        row = (
            RunRecord.select()
            .where(RunRecord.workspace == workspace)
            .order_by(RunRecord.created_at.desc(), RunRecord.id.desc())
            .first()
        )
        return RunInfo.of(row) if row is not None else None

    def session_runs(self, session_id: str) -> list[RunInfo]:
        """The runs of a conversation, oldest first."""
        query = (
            RunRecord.select()
            .where(RunRecord.session == session_id)
            .order_by(RunRecord.created_at, RunRecord.id)
        )
        return [RunInfo.of(row) for row in query]

    def recent_sessions(self, limit: int = 50) -> list[SessionInfo]:
        """Conversations, the most recently active first, each with its latest run."""
        return self.sessions_page(limit=limit)[0]

    def sessions_page(
        self, *, workspace: str | None = None, cursor: str | None = None, limit: int = 50
    ) -> tuple[list[SessionInfo], str | None]:
        """A page of sessions (newest activity first) and the cursor of the next
        one, None at the end. BadCursor for a cursor this store did not make."""
        rows, following = page(self.db, workspace=workspace, cursor=cursor, limit=limit)
        return self._infos(rows), following

    def session_info(self, session_id: str) -> SessionInfo | None:
        row = one(self.db, session_id)
        return self._infos([row])[0] if row is not None else None

    def _infos(self, rows: list[SessionRow]) -> list[SessionInfo]:
        if not rows:
            return []
        last = {r.id: RunInfo.of(r) for r in RunRecord.select().where(
            RunRecord.id.in_([row.last_run for row in rows])
        )}
        return [
            SessionInfo(
                row.id, row.workspace, row.title, row.created_at, row.runs, last[row.last_run],
                models=tuple(row.models), tokens=row.tokens, cost=row.cost, parent=row.parent,
                agent=row.agent,
            )
            for row in rows
        ]

    def search_sessions(self, text: str, limit: int = 20) -> list[SearchHit]:
        """The pieces of sessions matching the words of ``text``, best first."""
        return search(self.db, text, limit=limit)

    def checkpoints_only_of(self, session_id: str) -> list[str]:
        """The checkpoints the session refers to (made by its runs, or named in
        its transcripts) that no other session refers to."""
        rows = self.db.execute_sql(
            "SELECT c.id FROM checkpoints c WHERE (c.run_id IN "
            "(SELECT id FROM runs WHERE session_id = ?) OR c.id IN "
            "(SELECT checkpoint_id FROM session_checkpoints WHERE session_id = ?)) "
            "AND NOT EXISTS (SELECT 1 FROM session_checkpoints o "
            "WHERE o.checkpoint_id = c.id AND o.session_id != ?)",
            (session_id, session_id, session_id),
        ).fetchall()
        return [row[0] for row in rows]

    def delete_session_rows(self, session_id: str) -> None:
        """The session, its runs, index rows, checkpoint references and session rules."""
        with self.db.atomic():
            for sql in (
                "DELETE FROM session_text WHERE session_id = ?",
                "DELETE FROM session_checkpoints WHERE session_id = ?",
                "DELETE FROM rules WHERE session_id = ?",
                "DELETE FROM runs WHERE session_id = ?",
                "DELETE FROM sessions WHERE id = ?",
            ):
                self.db.execute_sql(sql, (session_id,))

    def sessions_idle_since(self, before: float) -> list[str]:
        """Sessions last active before ``before`` with no run going."""
        rows = self.db.execute_sql(
            "SELECT s.id FROM sessions s WHERE s.last_active < ? AND NOT EXISTS "
            "(SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status = 'running')",
            (before,),
        ).fetchall()
        return [row[0] for row in rows]

    def session_handoff(self, session_id: str) -> str | None:
        """The handoff doc its last compaction wrote; None when it was never compacted."""
        row = self.db.execute_sql(
            "SELECT handoff FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return row[0] if row else None

    def get_session(self, session_id: str) -> SessionRecord | None:
        row: SessionRecord | None = SessionRecord.get_or_none(SessionRecord.id == session_id)
        return row

    def preference(self, key: str) -> Any | None:
        """A value the app and the CLI share (the default model, …); None when unset."""
        row = self.db.execute_sql("SELECT value FROM preferences WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def set_preference(self, key: str, value: Any | None) -> None:
        """Remember ``value`` for ``key``; None forgets it."""
        with self.db.atomic():
            if value is None:
                self.db.execute_sql("DELETE FROM preferences WHERE key = ?", (key,))
                return
            self.db.execute_sql(
                "INSERT INTO preferences (key, value, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value, "
                "updated_at = excluded.updated_at",
                (key, json.dumps(value), time.time()),
            )

    def running_on(self, workspace: str) -> list[RunInfo]:
        """The runs working on ``workspace`` now, in any Sparrow process (a run
        left 'running' by a process that died was closed when the store opened)."""
        query = RunRecord.select().where(
            (RunRecord.status == "running") & (RunRecord.workspace == workspace)
        )
        return [RunInfo.of(row) for row in query if self.locks.alive(row.id, row.pid)]

    def recent_workspaces(self, limit: int = 20) -> list[str]:
        cursor = self.db.execute_sql(
            "SELECT workspace FROM runs GROUP BY workspace ORDER BY MAX(created_at) DESC LIMIT ?",
            (limit,),
        )
        return [row[0] for row in cursor.fetchall()]
