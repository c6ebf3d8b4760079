"""Memory facts: short ``key: value`` notes in the store (table ``facts``, made
by migration ``m005_memory``), global or of one workspace, with a full-text
index over key and value. Every write passes the guards."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from peewee import SQL, AutoField, FloatField, Model, SqliteDatabase, TextField

from server.engine.memory.guards import MemoryWriteError, check_fact
from server.engine.store import Store
from server.engine.store.migrations import apply_migrations

SEARCH_LIMIT = 50


class FactRecord(Model):
    id = AutoField()
    key = TextField()
    value = TextField()
    workspace = TextField(null=True)  # None: global
    updated_at = FloatField()

    class Meta:
        table_name = "facts"


@dataclass(frozen=True)
class Fact:
    id: int
    key: str
    value: str
    workspace: str | None
    updated_at: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, row: FactRecord) -> Fact:
        return cls(row.id, row.key, row.value, row.workspace, row.updated_at)


def scope_of(workspace: str | Path | None) -> str | None:
    """A workspace as facts record it: its resolved path, as runs record theirs."""
    if workspace is None or str(workspace) == "":
        return None
    return str(Path(workspace).expanduser().resolve())


def fts_query(term: str) -> str | None:
    """``term`` as an FTS5 query that cannot be a syntax error: every word quoted
    (a quote inside doubled), all of them required, the last one a prefix so that
    a search box finds as it is typed. None when there is no word to look for."""
    words = [w for w in term.split() if re.search(r"\w", w)]
    if not words:
        return None
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


def _in_scope(workspace: str | None) -> Any:
    if workspace is None:
        return FactRecord.workspace.is_null()
    return FactRecord.workspace == workspace


class Facts:
    def __init__(self, db: Store | SqliteDatabase) -> None:
        database = db.db if isinstance(db, Store) else db
        apply_migrations(database)  # a no-op when the Store already did
        database.bind([FactRecord])
        self.db = database

    def remember(self, key: str, value: str, workspace: str | Path | None = None) -> Fact:
        """Save ``key: value`` (global, or of ``workspace``); the same key in the
        same scope is updated. Raises MemoryRejected / MemoryWriteError."""
        key, value = key.strip(), value.strip()
        check_fact(key, value)
        scope = scope_of(workspace)
        now = time.time()
        with self.db.atomic():
            row = FactRecord.get_or_none((FactRecord.key == key) & _in_scope(scope))
            if row is None:
                row = FactRecord.create(key=key, value=value, workspace=scope, updated_at=now)
            else:
                row.value, row.updated_at = value, now
                row.save()
        return Fact.of(row)

    def get(self, fact_id: int) -> Fact | None:
        row = FactRecord.get_or_none(FactRecord.id == fact_id)
        return Fact.of(row) if row is not None else None

    def recall(self, key: str | None = None, workspace: str | Path | None = None) -> list[Fact]:
        """The fact ``key`` as ``workspace`` sees it (its own, else the global
        one), or with no key every fact it sees, the most recent first."""
        scope = scope_of(workspace)
        visible = _in_scope(None) if scope is None else (_in_scope(None) | _in_scope(scope))
        query = FactRecord.select().where(visible)
        if key is None:
            return [Fact.of(r) for r in query.order_by(*_newest())]
        rows = list(query.where(FactRecord.key == key.strip()))
        rows.sort(key=lambda r: r.workspace is None)  # the workspace's own first
        return [Fact.of(rows[0])] if rows else []

    def list_facts(self, workspace: str | Path | None = None, *, limit: int = 0) -> list[Fact]:
        """Every fact, or only those ``workspace`` sees; the most recent first."""
        if workspace is not None:
            facts = self.recall(None, workspace)
            return facts[:limit] if limit else facts
        query = FactRecord.select().order_by(*_newest())
        if limit:
            query = query.limit(limit)
        return [Fact.of(r) for r in query]

    def search(
        self, term: str, workspace: str | Path | None = None, *, limit: int = SEARCH_LIMIT
    ) -> list[Fact]:
        """Facts matching every word of ``term`` (in key or value, accents
        ignored), the best match first; only those ``workspace`` sees when given."""
        query = fts_query(term)
        if query is None:
            return []
        sql = (
            "SELECT f.id FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            "WHERE facts_fts MATCH ?"
        )
        params: list[Any] = [query]
        scope = scope_of(workspace)
        if scope is not None:
            sql += " AND (f.workspace IS NULL OR f.workspace = ?)"
            params.append(scope)
        # bm25 weighs a match in the key above one in the value.
        sql += " ORDER BY bm25(facts_fts, 2.0, 1.0), f.updated_at DESC LIMIT ?"
        params.append(limit)
        ids = [row[0] for row in self.db.execute_sql(sql, params).fetchall()]
        return self._by_ids(ids)

    def forget(self, ident: int | str, workspace: str | Path | None = None) -> Fact | None:
        """Remove a fact by its id (an int), or by its key (a str): ``workspace``'s
        own fact of that key, else the global one. The fact removed, or None."""
        if isinstance(ident, int):
            fact = self.get(ident)
        elif not ident.strip():
            raise MemoryWriteError("name the fact to forget: its id or its key")
        else:
            found = self.recall(ident, workspace)
            fact = found[0] if found else None
        if fact is not None:
            FactRecord.delete().where(FactRecord.id == fact.id).execute()
        return fact

    def _by_ids(self, ids: Iterable[int]) -> list[Fact]:
        order = list(ids)
        rows = {r.id: r for r in FactRecord.select().where(FactRecord.id.in_(order))}
        return [Fact.of(rows[i]) for i in order if i in rows]


def _newest() -> tuple[Any, ...]:
    return (FactRecord.updated_at.desc(), SQL("id DESC"))
