"""What every command that touches state opens: the paths and the store."""

from __future__ import annotations

import sys

from server.core.paths import Paths, resolve_paths
from server.core.redaction import redact
from server.engine.store import Store


def open_state() -> tuple[Paths, Store]:
    """The paths and the store, with the sessions past the age limit deleted."""
    from server.runtime.sessions import apply_retention

    paths = resolve_paths().ensure()
    store = Store(paths.database)
    apply_retention(paths, store)
    return paths, store


def fail(message: str, code: int = 1) -> int:
    print(f"sparrow: {redact(message)}", file=sys.stderr)
    return code
