"""Memory: facts in the store and two bounded docs, injected into a run's
system prompt as information, never as instructions; every write passes the
guards (``guards``), whoever makes it."""

from server.engine.memory.bank import Memory, WorkspaceMemory
from server.engine.memory.block import memory_block
from server.engine.memory.docs import Doc, DocKind, Docs
from server.engine.memory.facts import Fact, Facts
from server.engine.memory.guards import MemoryRejected, MemoryWriteError

__all__ = [
    "Doc",
    "DocKind",
    "Docs",
    "Fact",
    "Facts",
    "Memory",
    "MemoryRejected",
    "MemoryWriteError",
    "WorkspaceMemory",
    "memory_block",
]
