"""Reading sessions: a page of them (keyset, newest activity first), one with
its runs, and full-text search over what they said. A session's status and
end are its latest run's, read here rather than kept as a second copy."""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from peewee import SqliteDatabase

from server.engine.store.snippets import Terms, snippet

# The latest run of each session, joined: one index probe per session listed.
_LATEST = (
    "JOIN runs r ON r.id = (SELECT id FROM runs WHERE session_id = s.id "
    "ORDER BY created_at DESC, id DESC LIMIT 1)"
)
# The agent that started the session: its first run's, two index probes per
# session listed (agent_runs is keyed by run, runs by session and time).
_AGENT = (
    "(SELECT a.agent FROM agent_runs a WHERE a.run_id = (SELECT id FROM runs "
    "WHERE session_id = s.id ORDER BY created_at, id LIMIT 1))"
)
SESSION_COLUMNS = (
    "s.id, s.workspace, s.title, s.created_at, s.models, s.tokens, s.cost, s.cost_unknown, "
    f"s.parent, s.last_active, (SELECT COUNT(*) FROM runs WHERE session_id = s.id), r.id, "
    f"{_AGENT}"
)
# A word found in very many pieces would cost a bm25 score for each: the best
# are taken among this many of the newest matching pieces (row ids follow time).
CANDIDATES = 1000
# A shorter last word is matched whole: as a prefix it would match most of the index.
MIN_PREFIX = 2


class BadCursor(ValueError):
    """A page cursor this store did not make."""


@dataclass(frozen=True)
class SessionRow:
    """A session as listed; ``last_run`` is the id of its latest run."""

    id: str
    workspace: str
    title: str
    created_at: float
    models: list[str]
    tokens: int
    cost: float | None
    parent: str | None
    last_active: float
    runs: int
    last_run: str
    agent: str | None

    @classmethod
    def of(cls, row: tuple[Any, ...]) -> SessionRow:
        sid, workspace, title, created, models, tokens, cost, unknown, parent, active = row[:10]
        try:
            names = json.loads(models)
        except (TypeError, json.JSONDecodeError):
            names = []
        return cls(
            id=sid,
            workspace=workspace,
            title=title,
            created_at=created,
            models=[n for n in names if isinstance(n, str)] if isinstance(names, list) else [],
            tokens=tokens,
            cost=None if unknown or cost is None else cost,
            parent=parent,
            last_active=active,
            runs=row[10],
            last_run=row[11],
            agent=row[12],
        )


def encode_cursor(row: SessionRow) -> str:
    raw = json.dumps([row.last_active, row.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        active, sid = json.loads(raw)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise BadCursor(f"not a page cursor: {cursor[:40]!r}") from exc
    if not isinstance(active, int | float) or not isinstance(sid, str):
        raise BadCursor(f"not a page cursor: {cursor[:40]!r}")
    return float(active), sid


def page(
    db: SqliteDatabase, *, workspace: str | None, cursor: str | None, limit: int
) -> tuple[list[SessionRow], str | None]:
    """One page of sessions, the most recently active first, and the cursor of the next."""
    where: list[str] = []
    params: list[object] = []
    if workspace is not None:
        where.append("s.workspace = ?")
        params.append(workspace)
    if cursor:
        active, sid = decode_cursor(cursor)
        where.append("(s.last_active < ? OR (s.last_active = ? AND s.id < ?))")
        params += [active, active, sid]
    sql = (
        f"SELECT {SESSION_COLUMNS} FROM sessions s {_LATEST} "
        f"{'WHERE ' + ' AND '.join(where) if where else ''} "
        "ORDER BY s.last_active DESC, s.id DESC LIMIT ?"
    )
    rows = [SessionRow.of(r) for r in db.execute_sql(sql, (*params, limit + 1)).fetchall()]
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, encode_cursor(rows[-1]) if more and rows else None


def one(db: SqliteDatabase, session_id: str) -> SessionRow | None:
    found = db.execute_sql(
        f"SELECT {SESSION_COLUMNS} FROM sessions s {_LATEST} WHERE s.id = ?", (session_id,)
    ).fetchone()
    return SessionRow.of(found) if found else None


_WORD = re.compile(r"\S+")


def match_expression(text: str) -> str | None:
    """The user's words as an FTS5 query: every word a quoted string (so no
    word is an operator or syntax), all of them required, the last one a
    prefix (results as you type) once it has two letters. None when there is
    no word."""
    words = _WORD.findall(text)
    if not words:
        return None
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    if _prefix(words):
        quoted[-1] += "*"
    return " ".join(quoted)


def _prefix(words: list[str]) -> bool:
    return len(words[-1]) >= MIN_PREFIX


@dataclass(frozen=True)
class SearchHit:
    session_id: str
    run_id: str
    seq: int
    turn: int
    kind: str
    title: str
    workspace: str
    started_at: float
    snippet: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "run_id": self.run_id,
            "seq": self.seq,
            "turn": self.turn,
            "kind": self.kind,
            "title": self.title,
            "workspace": self.workspace,
            "started_at": self.started_at,
            "snippet": self.snippet,
        }


def search(db: SqliteDatabase, text: str, *, limit: int) -> list[SearchHit]:
    """The best matching pieces (bm25, among the newest CANDIDATES that match),
    each with where it is and a snippet."""
    expression = match_expression(text)
    if expression is None:
        return []
    rows = db.execute_sql(
        "SELECT t.session_id, t.run_id, t.seq, t.turn, t.kind, s.title, s.workspace, "
        "s.created_at, t.body "
        "FROM (SELECT rowid, rank FROM (SELECT rowid, rank FROM session_fts "
        "WHERE session_fts MATCH ? ORDER BY rowid DESC LIMIT ?) ORDER BY rank, rowid LIMIT ?) hit "
        "JOIN session_text t ON t.id = hit.rowid JOIN sessions s ON s.id = t.session_id "
        "ORDER BY hit.rank, hit.rowid",
        (expression, CANDIDATES, limit),
    ).fetchall()
    words = _WORD.findall(text)
    terms = Terms(words, _prefix(words))
    return [
        SearchHit(sid, run, seq, turn, kind, title, ws, started, snippet(body, terms))
        for sid, run, seq, turn, kind, title, ws, started, body in rows
    ]
