"""The values the checkpoint engine hands out: small frozen dataclasses that
surfaces render and events carry (``to_dict`` gives plain JSON types)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

DiffStatus = Literal["added", "modified", "deleted", "mode"]


class CheckpointError(RuntimeError):
    """A checkpoint operation that cannot be done; the message says why."""


class CheckpointNotFound(CheckpointError, LookupError):
    """No checkpoint has that id (or it was pruned)."""


@dataclass(frozen=True)
class SkippedFile:
    """A path left out of a checkpoint, and why (too big, nested repository...)."""

    path: str
    reason: str


@dataclass(frozen=True)
class Checkpoint:
    id: str
    workspace: str
    run_id: str
    turn: int
    tool: str
    created_at: float
    commit: str
    files_changed: list[str]
    bytes_stored: int
    duration_ms: int
    skipped: list[SkippedFile]
    reason: str = ""
    # The workspace's first checkpoint: what was there, not what changed.
    baseline: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FileDiff:
    path: str
    status: DiffStatus
    binary: bool
    patch: str
    old_size: int
    new_size: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RollbackResult:
    """What a restore changed. ``untouched`` lists paths the checkpoint holds
    that were left alone because they are ignored, skipped or blocked now."""

    restored: list[str]
    removed: list[str]
    untouched: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RewindResult:
    """A rewind: the checkpoint taken just before it (rewind to that one to
    undo it), then what was restored and removed."""

    checkpoint_before: Checkpoint
    restored: list[str]
    removed: list[str]
    untouched: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
