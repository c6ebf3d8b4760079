"""Checkpoints: every change to a workspace reversible, without touching the
user's own git.

A shadow git repository per workspace (``<state>/checkpoints/<key>.git``,
driven with pygit2) holds one parentless commit per checkpoint, kept alive by
``refs/sparrow/<id>``; the checkpoint index is a table of the store.
``CheckpointStore`` is the facade; the modules beside it each do one thing:
``shadow`` (where and how the repository is opened), ``lock``, ``excludes``,
``manifest`` (stat cache), ``capture``, ``objects`` and ``pack`` (writing),
``take`` (one checkpoint), ``index`` (the table), ``diff``, ``rewind``, ``prune``.
"""

from server.engine.checkpoints.model import (
    Checkpoint,
    CheckpointError,
    CheckpointNotFound,
    FileDiff,
    RewindResult,
    RollbackResult,
    SkippedFile,
)
from server.engine.checkpoints.store import CheckpointStore

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointNotFound",
    "CheckpointStore",
    "FileDiff",
    "RewindResult",
    "RollbackResult",
    "SkippedFile",
]
