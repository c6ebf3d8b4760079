"""One object for the whole memory: the facts in the store and the docs in the
data folder; and, bound to a workspace, what a run sees and its tool writes."""

from __future__ import annotations

from pathlib import Path

from peewee import SqliteDatabase

from server.core.paths import Paths
from server.engine.memory.block import memory_block
from server.engine.memory.docs import Docs
from server.engine.memory.facts import Fact, Facts
from server.engine.store import Store


class Memory:
    def __init__(self, paths: Paths, db: Store | SqliteDatabase) -> None:
        self.paths = paths
        self.facts = Facts(db)
        self.docs = Docs(paths)

    def at(self, workspace: Path) -> WorkspaceMemory:
        return WorkspaceMemory(self, workspace)

    def block(self, workspace: Path) -> str:
        return memory_block(self.docs, self.facts, workspace)


class WorkspaceMemory:
    """The memory as a run on ``root`` uses it: its facts are saved for that workspace."""

    def __init__(self, memory: Memory, root: Path) -> None:
        self.memory = memory
        self.root = root

    def block(self) -> str:
        return self.memory.block(self.root)

    def remember(self, key: str, value: str) -> Fact:
        return self.memory.facts.remember(key, value, self.root)

    def recall(self, key: str | None = None) -> list[Fact]:
        return self.memory.facts.recall(key, self.root)

    def forget(self, key: str) -> Fact | None:
        return self.memory.facts.forget(key, self.root)
