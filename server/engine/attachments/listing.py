"""A folder as the model gets it: the paths under it, breadth first, bounded,
without what git ignores there (answered by pygit2 when the folder is in a
repository), nor ``.git``, nor Sparrow's own folders."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SKIPPED = frozenset({".git"})


@dataclass(frozen=True)
class Listing:
    entries: list[str]  # relative posix paths, folders ending in "/"
    complete: bool  # False: the limit cut it


def _ignore_check(folder: Path) -> Callable[[Path, bool], bool]:
    """Whether a path under ``folder`` is ignored by the repository it is in."""
    import pygit2  # ~20 MB: only for a folder attached

    found = pygit2.discover_repository(str(folder))
    if found is None:
        return lambda path, is_dir: False
    repo = pygit2.Repository(found)
    workdir = repo.workdir
    if workdir is None:
        return lambda path, is_dir: False
    top = Path(workdir).resolve()

    def ignored(path: Path, is_dir: bool) -> bool:
        try:
            rel = path.relative_to(top).as_posix()
        except ValueError:
            return False
        return bool(repo.path_is_ignored(rel + "/" if is_dir else rel))

    return ignored


def list_folder(folder: Path, limit: int, own: dict[Path, str]) -> Listing:
    ignored = _ignore_check(folder)
    entries: list[str] = []
    pending: deque[Path] = deque([folder])
    while pending:
        current = pending.popleft()
        try:
            with os.scandir(current) as scan:
                children = sorted(scan, key=lambda e: e.name)
        except OSError:
            continue  # an unreadable folder is left out, not a failure
        for child in children:
            path = Path(child.path)
            is_dir = child.is_dir(follow_symlinks=False)
            if child.name in SKIPPED or ignored(path, is_dir):
                continue
            if any(path.resolve().is_relative_to(mine) for mine in own):
                continue
            if len(entries) >= limit:
                return Listing(entries, complete=False)
            rel = path.relative_to(folder).as_posix()
            entries.append(rel + "/" if is_dir else rel)
            if is_dir:
                pending.append(path)
    return Listing(entries, complete=True)
