"""The shadow repository of a workspace: a bare git repository under
``<state>/checkpoints/<key>.git`` whose work tree is set, in memory only, to
the workspace.

It is created with ``init_repository(gitdir, bare=True)`` and opened with
``Repository(gitdir)`` + ``repo.workdir = workspace`` at each use; never with
``init_repository(..., workdir_path=...)``, which writes a ``.git`` file into
the user's folder. Nothing here ever opens the workspace's own ``.git``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pygit2

from server.engine.workspace import workspace_key

REF_PREFIX = "refs/sparrow/"

_CONFIG = {
    # Objects are only ever written by Sparrow; nothing should run git's gc here.
    "gc.auto": "0",
    "core.logallrefupdates": "false",
    "core.autocrlf": "false",
}


@dataclass(frozen=True)
class Shadow:
    workspace: Path
    gitdir: Path
    lock_path: Path

    @property
    def state_dir(self) -> Path:
        """Sparrow's own files inside the shadow repository."""
        return self.gitdir / "sparrow"

    @property
    def manifest_path(self) -> Path:
        return self.state_dir / "manifest"

    @property
    def stamp_path(self) -> Path:
        return self.state_dir / "stamp"

    @property
    def pack_dir(self) -> Path:
        return self.gitdir / "objects" / "pack"

    def exists(self) -> bool:
        return (self.gitdir / "HEAD").is_file()

    def open(self, *, bare: bool = False) -> pygit2.Repository:
        """The repository, created on first use; call with the workspace lock held.
        ``bare``: without the workspace as its work tree (it may be gone)."""
        if not self.exists():
            self._create()
        repo = pygit2.Repository(str(self.gitdir))
        if not bare:
            repo.workdir = str(self.workspace)
        return repo

    def _create(self) -> None:
        self.gitdir.parent.mkdir(parents=True, exist_ok=True)
        repo = pygit2.init_repository(str(self.gitdir), bare=True)
        for key, value in _CONFIG.items():
            repo.config[key] = value
        repo.free()
        self.state_dir.mkdir(exist_ok=True)
        # For people looking at the folder: which workspace this repository mirrors.
        (self.state_dir / "workspace").write_text(str(self.workspace) + "\n", encoding="utf-8")


def locate(checkpoints_dir: Path, workspace: Path) -> Shadow:
    key = workspace_key(workspace)
    return Shadow(
        workspace=workspace,
        gitdir=checkpoints_dir / f"{key}.git",
        lock_path=checkpoints_dir / f"{key}.lock",
    )


def touch_stamp(shadow: Shadow) -> int:
    """Mark the start of a scan on the file system's own clock (nanoseconds).

    A file whose mtime is at or after the stamp may change again within the
    same clock tick without its stat data changing ("racily clean", as git
    calls it): such entries are stored smudged so the next scan re-reads them.
    """
    path = shadow.stamp_path
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.utime(path)
    except FileNotFoundError:
        path.touch()
    return os.stat(path).st_mtime_ns
