"""The store: sessions and runs in ``<state>/sessions.db`` (SQLite, WAL)."""

from server.engine.store.store import RunInfo, Store, new_id

__all__ = ["RunInfo", "Store", "new_id"]
