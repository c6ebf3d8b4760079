"""The store: sessions and runs in ``<state>/sessions.db`` (SQLite, WAL)."""

from server.engine.store.store import RunInfo, SessionInfo, Store, new_id

__all__ = ["RunInfo", "SessionInfo", "Store", "new_id"]
