"""Putting a workspace back as a checkpoint had it.

The change set is the tree diff between the workspace as just captured and
the checkpoint, so only what differs is written. Rules:

- a file the checkpoint holds and the workspace lacks is written back, with
  its executable bit (or as a symlink);
- a file tracked now that the checkpoint lacks was created since: removed;
- a path the checkpoint holds that exists now but is not tracked (ignored,
  skipped, or excluded) is left alone and reported as untouched;
- nothing is written through a symlinked folder, under ``.git``, or outside
  the workspace; folders emptied by a removal are removed.

Contents are written as raw bytes (no line-ending or filter conversion), to
a temporary file beside the target and renamed over it. libgit2's checkout is
not used: it would apply the workspace's .gitattributes filters.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from server.engine.checkpoints import excludes
from server.engine.checkpoints.diff import tree_changes
from server.engine.checkpoints.manifest import Entry, Manifest, StatKey, stat_key
from server.engine.checkpoints.model import RollbackResult
from server.engine.checkpoints.objects import FILEMODE_EXEC, FILEMODE_LINK, Change, update_tree

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


@dataclass
class _Plan:
    removals: list[str] = field(default_factory=list)
    # (path, raw blob id, git mode, tracked now)
    writes: list[tuple[str, bytes, int, bool]] = field(default_factory=list)


def safe_path(path: str) -> bool:
    parts = path.split("/")
    return all(
        part not in ("", ".", "..") and "\x00" not in part and not excludes.is_git_dir_name(part)
        for part in parts
    )


def _selected(path: str, only: list[str] | None) -> bool:
    if only is None:
        return True
    return any(path == p or path.startswith(p + "/") for p in only)


def plan(repo: pygit2.Repository, current: bytes, target: bytes, only: list[str] | None) -> _Plan:
    result = _Plan()
    for path, before, after in tree_changes(repo, current, target):
        if not _selected(path, only):
            continue
        if after is None:
            result.removals.append(path)
        else:
            result.writes.append((path, after[0], after[1], before is not None))
    return result


def restore(
    repo: pygit2.Repository,
    workspace: Path,
    current: Manifest,
    target_tree: bytes,
    stamp_ns: int,
    only: Iterable[str] | None = None,
    target_skipped: Iterable[str] = (),
    reserved: Iterable[str] = (),
    target_empty: Iterable[str] | None = None,
) -> tuple[RollbackResult, Manifest, set[str]]:
    """Make the workspace match ``target_tree``; ``current`` must be a capture
    taken under the same lock. Returns what was done, the updated manifest and
    the paths whose manifest entries changed.

    A file tracked now that the target lacks is removed only if the target did
    not skip it (``target_skipped``: its skipped paths, folders ending in '/')
    and the target's ignore rules would not have ignored it: in both cases
    the file existed then, untracked. Nothing under ``reserved`` (Sparrow's
    own folders, which a checkpoint taken before they were known may hold) is
    written or removed. ``target_empty``: the target's empty folders (None for
    a checkpoint from before they were recorded): made again, and empty folders
    the target did not have are removed."""
    assert current.tree is not None
    selected = None if only is None else list(only)
    todo = plan(repo, current.tree, target_tree, selected)
    kept = {folder + "/" for folder in reserved}
    if kept:
        todo.writes = [w for w in todo.writes if not _under(w[0], kept)]
        todo.removals = [p for p in todo.removals if not _under(p, kept)]
    run = _Restore(repo, str(workspace), current, stamp_ns)
    # The target's .gitignore files first, so its ignore rules can be asked.
    rules = [w for w in todo.writes if _is_gitignore(w[0])]
    rule_removals = [p for p in todo.removals if _is_gitignore(p)]
    for path in rule_removals:
        run.remove(path)
    for write in rules:
        run.write(*write)
    protected = set(target_skipped)
    removals = [p for p in todo.removals if not _is_gitignore(p)]
    if rules or rule_removals:
        fresh = pygit2.Repository(repo.path)
        fresh.workdir = str(workspace)
        try:
            ignored = {p for p in removals if _safe_ignored(fresh, p)}
        finally:
            fresh.free()
    else:
        ignored = set()
    for path in sorted(removals, reverse=True):
        if path in ignored or _under(path, protected):
            run.untouched.append(path)
        else:
            run.remove(path)
    _remove_empty(run.root, run.emptied)
    for write in todo.writes:
        if not _is_gitignore(write[0]):
            run.write(*write)
    if target_empty is not None:
        wanted = {f for f in target_empty if _selected(f, selected) and not _under(f, kept)}
        # Folders empty now that the target did not have empty: gone (unless
        # the writes filled them), with the folders they leave empty.
        run.emptied = set()
        for folder in sorted(run.empty - wanted, reverse=True):
            if _selected(folder, selected) and not _under(folder, kept):
                run.remove_empty_folder(folder)
        _remove_empty(run.root, run.emptied - wanted)
        for folder in sorted(wanted):
            run.make_folder(folder)
    return run.finish(repo, current)


def _is_gitignore(path: str) -> bool:
    return path.rsplit("/", 1)[-1] == ".gitignore"


def _safe_ignored(repo: pygit2.Repository, path: str) -> bool:
    try:
        return bool(repo.path_is_ignored(path))
    except (UnicodeEncodeError, pygit2.GitError):
        return False


def _under(path: str, protected: set[str]) -> bool:
    if path in protected:
        return True
    parts = path.split("/")
    return any("/".join(parts[:i]) + "/" in protected for i in range(1, len(parts)))


class _Restore:
    """The file operations of one restore, and the manifest entries they change."""

    def __init__(
        self, repo: pygit2.Repository, root: str, current: Manifest, stamp_ns: int
    ) -> None:
        self.repo = repo
        self.root = root
        self.stamp_ns = stamp_ns
        self.entries = dict(current.entries)
        self.dirs = set(current.dirs)
        self.empty = set(current.empty or ())
        self.changes: dict[str, Change] = {}
        self.removed: list[str] = []
        self.restored: list[str] = []
        self.untouched: list[str] = []
        self.emptied: set[str] = set()

    def remove(self, path: str) -> None:
        full = os.path.join(self.root, path)
        if not safe_path(path) or not _parents_safe(self.root, path, create=False):
            self.untouched.append(path)
            return
        try:
            if stat.S_ISDIR(os.lstat(full).st_mode):
                self.untouched.append(path)
                return
            os.unlink(full)
        except FileNotFoundError:
            pass
        self.removed.append(path)
        self.entries.pop(path, None)
        self.changes[path] = None
        self.emptied.add(os.path.dirname(path))

    def write(self, path: str, raw: bytes, mode: int, tracked: bool) -> None:
        full = os.path.join(self.root, path)
        if not safe_path(path):
            self.untouched.append(path)
            return
        if not tracked and not _clear_empty(full):
            self.untouched.append(path)  # something untracked (ignored, skipped) is there
            return
        if not _parents_safe(self.root, path, create=True):
            self.untouched.append(path)
            return
        blob = self.repo[pygit2.Oid(raw=raw)]
        assert isinstance(blob, pygit2.Blob)
        data = blob.data
        key: StatKey = stat_key(_write(full, data, mode))
        if key[2] >= self.stamp_ns:
            key = (key[0], -1, key[2], key[3], key[4])
        entry: Entry = (key, raw, mode, len(data))
        self.entries[path] = entry
        self.changes[path] = (raw, mode)
        self.restored.append(path)
        parts = path.split("/")
        self.dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))

    def make_folder(self, folder: str) -> None:
        full = os.path.join(self.root, folder)
        if (
            not safe_path(folder)
            or os.path.lexists(full)
            or not _parents_safe(self.root, folder, create=True)
        ):
            return
        try:
            os.mkdir(full)
        except OSError:
            self.untouched.append(folder + "/")
            return
        self.restored.append(folder + "/")
        parts = folder.split("/")
        self.dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        self.empty.add(folder)

    def remove_empty_folder(self, folder: str) -> None:
        if not safe_path(folder) or not _parents_safe(self.root, folder, create=False):
            return
        try:
            os.rmdir(os.path.join(self.root, folder))
        except OSError:
            return  # not empty any more, or gone: not ours to force
        self.removed.append(folder + "/")
        self.dirs.discard(folder)
        self.empty.discard(folder)
        self.emptied.add(os.path.dirname(folder))

    def _still_empty(self) -> set[str]:
        """The empty folders, less those a write has filled since."""
        left = set()
        for folder in self.empty:
            try:
                with os.scandir(os.path.join(self.root, folder)) as listing:
                    if next(listing, None) is None:
                        left.add(folder)
            except OSError:
                continue
        return left

    def finish(
        self, repo: pygit2.Repository, current: Manifest
    ) -> tuple[RollbackResult, Manifest, set[str]]:
        assert current.tree is not None
        changes = self.changes
        tree = update_tree(repo, current.tree, changes) if changes else current.tree
        old, new = current.entries, self.entries
        total = current.total + sum(
            (new[p][3] if p in new else 0) - (old[p][3] if p in old else 0) for p in changes
        )
        manifest = Manifest(
            tree=tree,
            entries=new,
            total=total,
            head=current.head,
            skipped=current.skipped,
            gitignores=current.gitignores,
            ignored=current.ignored,
            dirs=self.dirs,
            empty=self._still_empty() if current.empty is not None else None,
            exclude_key=current.exclude_key,
        )
        result = RollbackResult(
            restored=sorted(self.restored),
            removed=sorted(self.removed),
            untouched=sorted(self.untouched),
        )
        return result, manifest, set(changes)


def _clear_empty(full: str) -> bool:
    """Make room at ``full`` if nothing but empty folders is there (git does not
    track folders, so an empty one is no one's file); whether it is free."""
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        return True
    if not stat.S_ISDIR(info.st_mode):
        return False
    with os.scandir(full) as listing:
        inside = list(listing)
    for entry in inside:
        if not entry.is_dir(follow_symlinks=False) or not _clear_empty(entry.path):
            return False
    os.rmdir(full)
    return True


def _parents_safe(root: str, path: str, *, create: bool) -> bool:
    """Whether every folder above ``path`` is a real folder (no symlink, no
    file), creating missing ones when ``create``."""
    parts = path.split("/")[:-1]
    current = root
    for part in parts:
        current = os.path.join(current, part)
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if not create:
                return False
            os.mkdir(current)
            continue
        if not stat.S_ISDIR(info.st_mode):
            return False
    return True


def _remove_empty(root: str, folders: set[str]) -> None:
    """Remove folders (and their parents) left empty by removals."""
    pending = set(folders)
    while pending:
        folder = max(pending, key=lambda f: (f.count("/"), f))
        pending.discard(folder)
        if not folder:
            continue
        try:
            os.rmdir(os.path.join(root, folder))
        except OSError:
            continue
        pending.add(os.path.dirname(folder))


def _write(full: str, data: bytes, mode: int) -> os.stat_result:
    folder, name = os.path.split(full)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.sparrow-tmp")
    try:
        existing: os.stat_result | None = os.lstat(full)
    except FileNotFoundError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        existing = None
    try:
        if mode == FILEMODE_LINK:
            os.symlink(os.fsdecode(data), tmp)
        else:
            executable = mode == FILEMODE_EXEC
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY
            fd = os.open(tmp, flags, 0o777 if executable else 0o666)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            if existing is not None:
                bits = stat.S_IMODE(existing.st_mode)
                bits = bits | ((bits & 0o444) >> 2) if executable else bits & ~0o111
                os.chmod(tmp, bits)
        os.replace(tmp, full)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    return os.lstat(full)
