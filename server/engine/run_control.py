"""What the owner of a live run tells the engine's loop from outside: why it was
cancelled, how far it got, and whether the user asked for a compaction. Its own
module so that the run manager can hold one without loading the loop."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RunControl:
    """What the owner of a live run tells the loop from outside."""

    cancel_reason: str = "cancelled by the user"
    turns: int = 0
    compact_requested: bool = False  # the user asked: compact before the next request
