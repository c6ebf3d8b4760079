"""What the checkpoint tests compare: a workspace's files as bytes and
executable bits, and a folder hashed whole (for the user's .git)."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

from server.core.paths import Paths
from server.core.settings import CheckpointSettings
from server.engine.checkpoints import CheckpointStore
from server.engine.store import Store

State = dict[str, tuple[str, bytes, bool]]  # path -> (kind, content or link target, exec bit)

SKIP_DIRS = {".git", "node_modules", "ignored"}


def files_of(root: Path, skip: set[str] = SKIP_DIRS) -> State:
    """Every file and symlink under ``root`` (paths with '/'), folders in
    ``skip`` left out wherever they are."""
    found: State = {}
    for folder, dirs, files in os.walk(root):
        kept = []
        for name in dirs:
            if os.path.islink(os.path.join(folder, name)):
                files.append(name)  # a symlink to a folder is a file to git
            elif name not in skip:
                kept.append(name)
        dirs[:] = kept
        for name in files:
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.fsencode(os.readlink(full)), False)
            else:
                found[rel] = ("file", Path(full).read_bytes(), bool(info.st_mode & stat.S_IXUSR))
    return found


def hash_folder(root: Path) -> str:
    """One hash of every path, mode, mtime and content under ``root``."""
    digest = hashlib.sha256()
    if not root.exists():
        return "absent"
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files + dirs):
            full = os.path.join(folder, name)
            info = os.lstat(full)
            digest.update(os.path.relpath(full, root).encode())
            digest.update(f"{info.st_mode} {info.st_mtime_ns} {info.st_size}".encode())
            if stat.S_ISREG(info.st_mode):
                digest.update(Path(full).read_bytes())
    return digest.hexdigest()


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@localhost",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@localhost",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_store(paths: Paths, **settings: int) -> tuple[Store, CheckpointStore]:
    store = Store(paths.database)
    return store, CheckpointStore(paths, CheckpointSettings(**settings), store)
