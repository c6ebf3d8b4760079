"""A run read back from its record: the events its transcript holds, and what
it sent its model for one turn (as the request view shows it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.core.events import Event
from server.core.paths import Paths
from server.core.settings import Settings
from server.engine.store import RunInfo, Store
from server.engine.transcript import BadLine, read_transcript


def load_events(info: RunInfo) -> list[Event]:
    path = Path(info.transcript)
    if not path.exists():
        return []
    return [item for item in read_transcript(path) if not isinstance(item, BadLine)]


def request_sent(
    store: Store, paths: Paths, info: RunInfo, turn: int, settings: Callable[[], Settings]
) -> dict[str, Any] | None:
    """What run ``info`` sent to its model for ``turn``; None when unknown.
    ``settings`` gives its workspace's, which say how its attachments were sent."""
    # Loaded when a request is first looked at: the server starts without them.
    from server.engine.conversation import request_of
    from server.runtime.attaching import as_sent

    runs = store.session_runs(info.session_id)
    earlier = [Path(r.transcript) for r in runs[: [r.id for r in runs].index(info.id)]]
    sent = request_of(earlier, Path(info.transcript), turn)
    if sent is None:
        return None
    known = settings()
    for message in sent["messages"]:
        if message.get("attachments"):
            message["attachments"] = [
                as_sent(entry, paths, known) for entry in message["attachments"]
            ]
    return sent
