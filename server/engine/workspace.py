"""A workspace: the folder a run works in. Every path a tool touches is
resolved here, through symlinks, and refused when it lands outside."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


class WorkspaceError(ValueError):
    """A folder that cannot be used as a workspace; the message says why."""


class OutsideWorkspace(PermissionError):
    """A tool path that resolves outside the workspace."""


class SymlinkLoop(OSError):
    """A path that cannot be resolved: its symlinks lead round in a circle."""


def workspace_key(workspace: Path) -> str:
    """A stable name for a workspace: a hash of its resolved path. Its checkpoints
    and its memory doc are filed under it."""
    raw = os.fsencode(str(workspace))
    return hashlib.sha256(raw).hexdigest()[:24]


def open_workspace(raw: str | os.PathLike[str]) -> Workspace:
    text = os.fspath(raw).strip()
    if not text:
        raise WorkspaceError("no workspace given: choose a folder to work in")
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    if not path.exists():
        raise WorkspaceError(f"workspace not found: {path}")
    if not path.is_dir():
        raise WorkspaceError(f"workspace is a file, not a folder: {path}")
    if not os.access(path, os.R_OK | os.X_OK):
        raise WorkspaceError(f"workspace cannot be read: {path}")
    return Workspace(path.resolve())


def own_folders_inside(root: Path, own: dict[Path, str]) -> dict[str, str]:
    """Sparrow's own folders that lie inside ``root``, as workspace-relative
    posix paths, with what each is ("" when ``root`` is itself inside one)."""
    inside: dict[str, str] = {}
    for folder, what in own.items():
        if folder == root or root.is_relative_to(folder):
            inside[""] = what
        elif folder.is_relative_to(root):
            inside[folder.relative_to(root).as_posix()] = what
    return inside


class Workspace:
    def __init__(self, root: Path, own: dict[Path, str] | None = None) -> None:
        self.root = root
        # Sparrow's own folders (state, config, ...): no tool call reaches them.
        self.own = own or {}

    def own_folder_of(self, path: Path) -> str | None:
        """What ``path`` is when it lies in one of Sparrow's own folders, else None.
        A workspace Sparrow made inside its own folders (a worktree sandbox under
        the state folder) is the run's to use."""
        for folder, what in self.own.items():
            if path.is_relative_to(folder) and not (
                self.root.is_relative_to(folder) and path.is_relative_to(self.root)
            ):
                return what
        return None

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def resolve(self, relative: str) -> Path:
        """The real path of ``relative`` (symlinks followed), which must stay inside."""
        if "\x00" in relative:
            raise OutsideWorkspace(f"path contains a NUL byte: {relative!r}")
        try:
            candidate = (self.root / relative).resolve()
        except RuntimeError as exc:  # Python before 3.13 says "Symlink loop" this way
            raise SymlinkLoop(
                f"'{relative}' cannot be resolved: it goes through a symlink loop"
            ) from exc
        if candidate != self.root and not candidate.is_relative_to(self.root):
            raise OutsideWorkspace(f"'{relative}' is outside the workspace {self.root}")
        return candidate

    def relative(self, path: Path) -> str:
        rel = path.relative_to(self.root).as_posix()
        return rel or "."
