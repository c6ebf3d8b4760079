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
from server.engine.store.liveness import RunLocks
from server.engine.store.migrations import apply_migrations
from server.engine.store.orphans import close_transcript, read_end
from server.engine.store.records import MODELS, RunRecord, SessionRecord

# The status of a run whose process died before it finished (a crash, a kill, a
# power cut), set by the next Sparrow process to open the store.
INTERRUPTED = "interrupted"
INTERRUPTED_REASON = "the Sparrow process running it (pid {pid}) ended before the run finished"


def new_id(prefix: str) -> str:
    """Sortable by time, readable, and unique enough for one user's machine."""
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


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
    """A conversation: its first task is its title."""

    id: str
    workspace: str
    title: str
    created_at: float
    runs: int
    last_run: RunInfo

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workspace": self.workspace,
            "title": self.title,
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
        return bool(changed)

    def create_session(self, workspace: str, title: str = "") -> str:
        session_id = new_id("s")
        SessionRecord.create(
            id=session_id, workspace=workspace, title=redact(title)[:200], created_at=time.time()
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
        cursor = self.db.execute_sql(
            "SELECT s.id, s.workspace, s.title, s.created_at, COUNT(r.id), MAX(r.created_at) "
            "FROM sessions s JOIN runs r ON r.session_id = s.id "
            "GROUP BY s.id ORDER BY MAX(r.created_at) DESC LIMIT ?",
            (limit,),
        )
        sessions = []
        for sid, workspace, title, created, count, _ in cursor.fetchall():
            last = (
                RunRecord.select()
                .where(RunRecord.session == sid)
                .order_by(RunRecord.created_at.desc(), RunRecord.id.desc())
                .first()
            )
            sessions.append(
                SessionInfo(sid, workspace, title, created, count, RunInfo.of(last))
            )
        return sessions

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
