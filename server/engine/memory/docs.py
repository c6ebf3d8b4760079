"""The bounded memory docs: ``USER.md`` (about the user, for every workspace)
and ``MEMORY.md`` (durable notes of one workspace), in Sparrow's own data
folder, where no tool call reaches: every change goes through ``write`` and
its guards."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from server.core.paths import Paths
from server.engine.memory.guards import MemoryWriteError, check_text
from server.engine.workspace import workspace_key


class DocKind(StrEnum):
    USER = "user"
    MEMORY = "memory"


LIMITS: Final = {DocKind.USER: 1_400, DocKind.MEMORY: 2_200}
NAMES: Final = {DocKind.USER: "USER.md", DocKind.MEMORY: "MEMORY.md"}


@dataclass(frozen=True)
class Doc:
    kind: DocKind
    path: Path
    text: str
    workspace: str | None  # MEMORY.md's workspace; None for USER.md

    @property
    def name(self) -> str:
        return NAMES[self.kind]

    @property
    def limit(self) -> int:
        return LIMITS[self.kind]

    @property
    def size(self) -> int:
        return len(self.text)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "name": self.name,
            "path": str(self.path),
            "workspace": self.workspace,
            "text": self.text,
            "size": self.size,
            "limit": self.limit,
        }


def doc_kind(name: str) -> DocKind:
    try:
        return DocKind(name.strip().lower())
    except ValueError:
        raise MemoryWriteError(f"no memory doc '{name}': it is 'user' or 'memory'") from None


class Docs:
    def __init__(self, paths: Paths) -> None:
        self.root = paths.memory

    def path(self, kind: DocKind, workspace: Path | None = None) -> Path:
        if kind == DocKind.USER:
            return self.root / NAMES[kind]
        if workspace is None:
            raise MemoryWriteError("MEMORY.md belongs to a workspace: name one")
        # The same key as the workspace's checkpoints: one name for one folder.
        return self.root / "workspaces" / workspace_key(_resolved(workspace)) / NAMES[kind]

    def read(self, kind: DocKind, workspace: Path | None = None) -> Doc:
        path = self.path(kind, workspace)
        try:
            text = path.read_text(encoding="utf-8", errors="replace").strip()
        except FileNotFoundError:
            text = ""
        where = str(_resolved(workspace)) if kind == DocKind.MEMORY and workspace else None
        return Doc(kind, path, text, where)

    def write(self, kind: DocKind, text: str, workspace: Path | None = None) -> Doc:
        """Replace the doc with ``text`` (empty: remove it) once the guards pass it."""
        path = self.path(kind, workspace)
        text = text.replace("\r\n", "\n").strip()
        check_text(text, limit=LIMITS[kind], what=NAMES[kind])
        if not text:
            path.unlink(missing_ok=True)
            return self.read(kind, workspace)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Whole or not at all: a reader (a run starting) never sees half a doc.
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text + "\n")
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return self.read(kind, workspace)


def _resolved(workspace: Path | None) -> Path:
    assert workspace is not None
    return Path(workspace).expanduser().resolve()
