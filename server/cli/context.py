"""What every command that touches state opens: the paths and the store."""

from __future__ import annotations

import sys

from server.core.paths import Paths, resolve_paths
from server.core.redaction import redact
from server.engine.store import Store


def open_state(*, retention: bool = True) -> tuple[Paths, Store]:
    """The paths and the store, with the sessions past the age limit deleted.

    ``retention=False`` for a command that names a run or a session: applied
    first, the age limit would delete the very one the user asks for (idle for
    longer than the limit). One that continues a session applies it once its
    run exists (``apply_retention``): the run keeps its session."""
    paths = resolve_paths().ensure()
    store = Store(paths.database)
    if retention:
        apply_retention(paths, store)
    return paths, store


def apply_retention(paths: Paths, store: Store) -> None:
    from server.runtime.sessions import apply_retention as apply

    apply(paths, store)


def fail(message: str, code: int = 1) -> int:
    print(f"sparrow: {redact(message)}", file=sys.stderr)
    return code
