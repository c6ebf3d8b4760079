"""Scanning a workspace: which paths a checkpoint holds, and which of them
must be read again.

The walk lists each folder once (by descriptor where the platform allows, so
each entry's stat is relative to it), leaves out the built-in excludes and
what git ignores, and compares every file's stat data with the manifest: only
files whose stat data differ become candidates to read. ``read_candidates``
then reads them, within the per-file cap and the workspace budget.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from bisect import bisect_left
from collections.abc import Callable, Collection
from dataclasses import dataclass

import pygit2

from server.core import formatting
from server.engine.checkpoints import excludes
from server.engine.checkpoints.manifest import Entry, Manifest, StatKey, stat_key
from server.engine.checkpoints.objects import (
    FILEMODE_BLOB,
    FILEMODE_EXEC,
    FILEMODE_LINK,
    Change,
    ObjectSink,
)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# Listing a folder by descriptor makes each entry's stat an fstatat() relative to
# it, about 15% cheaper than a stat of the whole path (POSIX only).
_SCANDIR_FD = os.scandir in os.supports_fd
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW


def _open_dir(folder: str) -> int | str:
    return os.open(folder, _DIR_FLAGS) if _SCANDIR_FD else folder


_BINARY = getattr(os, "O_BINARY", 0)


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int
    max_total_bytes: int


format_size = formatting.size


class Scan:
    def __init__(
        self,
        repo: pygit2.Repository,
        root: str,
        old: Manifest,
        limits: Limits,
        *,
        fresh: bool,
    ) -> None:
        self.repo = repo
        self.root = root
        self.old = old
        self.limits = limits
        self.fresh = fresh  # ignore decisions cannot be reused
        self.entries: dict[str, Entry] = {}
        self.total = 0
        self.skipped: dict[str, str] = {}
        self.gitignores: dict[str, StatKey] = {}
        self.ignored: set[str] = set()
        self.dirs: set[str] = set()
        self.empty: set[str] = set()  # walked folders with nothing in them
        self.candidates: list[tuple[str, os.stat_result]] = []
        self.read: list[str] = []  # paths whose entry was made anew
        self.hint_touched: set[str] | None = None  # None: every path was looked at
        # A file with more than one link: a write through another link raises
        # no event in the workspace, so a watch cannot vouch for it.
        self.linked = False
        # Told before each folder is listed (the file watch arms itself there).
        self.on_folder: Callable[[str], None] | None = None
        # Sparrow's own folders inside the workspace (relative path -> what it is).
        self.reserved: dict[str, str] = {}
        self._known: _KnownPaths | None = None  # built at the first folder forgotten

    # -- what to look at -------------------------------------------------

    def full(self) -> None:
        self._walk("")

    def hinted(self, paths: list[str]) -> None:
        old = self.old
        self.entries = dict(old.entries)
        self.total = old.total
        self.skipped = dict(old.skipped)
        self.gitignores = dict(old.gitignores)
        self.ignored = set(old.ignored)
        self.dirs = set(old.dirs)
        self.empty = set(old.empty or ())
        self.hint_touched = set()
        walked: set[str] = set()  # folders walked whole in this scan
        # Sorted: a folder comes before what is below it, which its walk covers.
        ordered = sorted(set(paths))
        for path in ordered:
            if _below_any(path, walked):
                continue
            self._forget(path)
            if (
                not self._parents_are_folders(path)
                or excludes.excluded_path(self.root, path)
                or _below_any(path + "/", self.reserved.keys())
            ):
                continue
            try:
                st = os.lstat(os.path.join(self.root, path))
            except OSError:
                continue  # gone (or out of reach): no longer captured
            is_dir = stat.S_ISDIR(st.st_mode)
            if self._is_ignored(path, is_dir=is_dir):
                continue
            self._forget_parents(path)
            if is_dir:
                self.dirs.add(path)
                walked.add(path)
                self._walk(path)
            else:
                self._consider(path, st)
        for path in ordered:
            self._recheck_empty(path.rpartition("/")[0])

    def _recheck_empty(self, folder: str) -> None:
        """A hinted path came or went: is the folder holding it empty now?"""
        if not folder or folder not in self.dirs:
            return
        try:
            with os.scandir(os.path.join(self.root, folder)) as listing:
                empty = next(listing, None) is None
        except OSError:
            empty = False
        if empty:
            self.empty.add(folder)
        else:
            self.empty.discard(folder)

    def _drop(self, path: str) -> None:
        entry = self.entries.pop(path, None)
        if entry is not None:
            self.total -= entry[3]
            assert self.hint_touched is not None
            self.hint_touched.add(path)

    def _forget(self, path: str) -> None:
        """Drop what is known of ``path`` and below it (it is looked at again)."""
        self._drop(path)
        self.ignored.discard(path)
        self.skipped.pop(path, None)
        self.skipped.pop(path + "/", None)
        self.gitignores.pop(path, None)
        if path not in self.dirs:
            return  # not a folder that was walked: nothing is known below it
        if self._known is None:
            self._known = _KnownPaths(self)
        self.empty.discard(path)
        for key in self._known.below(path):
            self._drop(key)
            self.empty.discard(key)
            self.skipped.pop(key, None)
            self.skipped.pop(key + "/", None)
            self.gitignores.pop(key, None)
            self.dirs.discard(key)
            self.ignored.discard(key)
        self.dirs.discard(path)

    def _parents_are_folders(self, path: str) -> bool:
        """Whether every folder above ``path`` is a real folder (not a symlink:
        nothing is captured through one). Entries for files that stood where
        those folders are, and are gone now, are dropped."""
        parts = path.split("/")
        real = True
        for index in range(1, len(parts)):
            parent = "/".join(parts[:index])
            try:
                mode = os.lstat(os.path.join(self.root, parent)).st_mode
            except OSError:
                mode = 0
            if parent in self.entries and not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                self._drop(parent)
            real = real and stat.S_ISDIR(mode)
        return real

    def _forget_parents(self, path: str) -> None:
        """A file where a folder above ``path`` now is has gone; the folders are walked."""
        parts = path.split("/")
        for index in range(1, len(parts)):
            parent = "/".join(parts[:index])
            self._drop(parent)
            self.skipped.pop(parent, None)
            self.dirs.add(parent)

    def _walk(self, start: str) -> None:
        root = self.root
        old_entries = self.old.entries
        entries = self.entries
        reuse = not self.fresh
        stack = [start]
        while stack:
            rel = stack.pop()
            folder = os.path.join(root, rel) if rel else root
            if self.on_folder is not None:
                self.on_folder(rel)
            try:
                handle = _open_dir(folder)
            except OSError as exc:
                if not rel:
                    raise
                if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                    self.skipped[rel + "/"] = f"cannot be read: {exc.strerror}"
                continue
            try:
                self._walk_folder(rel, handle, stack, old_entries, entries, reuse)
            finally:
                if isinstance(handle, int):
                    os.close(handle)

    def _walk_folder(
        self,
        rel: str,
        handle: int | str,
        stack: list[str],
        old_entries: dict[str, Entry],
        entries: dict[str, Entry],
        reuse: bool,
    ) -> None:
        """One folder of the walk; ``handle`` stays open while its entries are stat'ed."""
        with os.scandir(handle) as listing:
            found = list(listing)
        if not found and rel:
            self.empty.add(rel)
        if rel:
            reason = excludes.excluded_by_content({entry.name for entry in found})
            if reason is not None:
                self.skipped[rel + "/"] = reason
                return
        prefix = rel + "/" if rel else ""
        nothing: dict[str, Entry] = {}
        lookup = (old_entries if reuse else nothing).get
        total = 0
        for entry in found:
            name = entry.name
            if name[0] == "." and excludes.is_git_dir_name(name):
                continue  # the workspace's own repository (or a git file)
            path = prefix + name
            if entry.is_dir(follow_symlinks=False):
                reason = excludes.excluded_dir(path, name)
                if reason is None and path in self.reserved:
                    reason = self.reserved[path]
                if reason is not None:
                    if reason:
                        self.skipped[path + "/"] = reason
                    continue
                if self._dir_allowed(path):
                    stack.append(path)
                continue
            if name == ".gitignore":
                with contextlib.suppress(OSError):
                    self.gitignores[path] = stat_key(entry.stat(follow_symlinks=False))
            known = lookup(path)
            if known is None:
                self._file(path, entry)
                continue
            # The common case, kept inline and lean: a tracked file, unchanged.
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # gone since the folder was listed
            key = known[0]
            if st.st_nlink > 1:
                self.linked = True
            if (
                st.st_mtime_ns == key[2]
                and st.st_ctime_ns == key[3]
                and st.st_size == key[1]
                and st.st_ino == key[4]
                and st.st_mode == key[0]
            ):
                entries[path] = known
                total += known[3]
            else:
                self._consider(path, st)
        self.total += total

    def _dir_allowed(self, path: str) -> bool:
        if not self.fresh:
            if path in self.old.dirs:
                self.dirs.add(path)
                return True
            if path in self.old.ignored:
                self.ignored.add(path)
                return False
        if self._is_ignored(path, is_dir=True):
            return False
        self.dirs.add(path)
        return True

    def _is_ignored(self, path: str, *, is_dir: bool) -> bool:
        """Whether git would ignore ``path``; a name git cannot hold counts as skipped."""
        try:
            ignored = self.repo.path_is_ignored(path + "/" if is_dir else path)
        except UnicodeEncodeError:
            self.skipped[path + "/" if is_dir else path] = "name is not valid UTF-8"
            return True
        if ignored:
            self.ignored.add(path)
        return bool(ignored)

    def _file(self, path: str, entry: os.DirEntry[str]) -> None:
        """A file with no reusable entry: decide whether it is ignored first."""
        if not self.fresh and path in self.old.ignored:
            self.ignored.add(path)
            return
        if self._is_ignored(path, is_dir=False):
            return
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            return
        self._consider(path, st)

    def _consider(self, path: str, st: os.stat_result) -> None:
        if self.hint_touched is not None:
            self.hint_touched.add(path)
        if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):
            self.linked = True
        known = self.old.entries.get(path)
        if known is not None and known[0] == stat_key(st):
            self.entries[path] = known
            self.total += known[3]
            return
        mode = st.st_mode
        if stat.S_ISREG(mode):
            if st.st_size > self.limits.max_file_bytes:
                cap = format_size(self.limits.max_file_bytes)
                self.skipped[path] = f"larger than the per-file cap ({cap})"
                return
        elif not stat.S_ISLNK(mode):
            self.skipped[path] = "not a regular file"
            return
        self.candidates.append((path, st))

    # -- reading what changed ----------------------------------------------

    def read_candidates(self, sink: ObjectSink, stamp_ns: int) -> None:
        budget = self.limits.max_total_bytes
        for path, st in sorted(self.candidates, key=lambda item: item[0]):
            if self.total + st.st_size > budget:
                self.skipped[path] = f"over the workspace budget ({format_size(budget)})"
                continue
            read = self._read(path, st)
            if read is None:
                continue
            key, data, mode = read
            if key[2] >= stamp_ns:
                key = (key[0], -1, key[2], key[3], key[4])  # racily clean: re-read next time
            self.entries[path] = (key, sink.blob(data), mode, len(data))
            self.total += len(data)
            self.read.append(path)

    def _read(self, path: str, st: os.stat_result) -> tuple[StatKey, bytes, int] | None:
        full = os.path.join(self.root, path)
        try:
            if stat.S_ISLNK(st.st_mode):
                return stat_key(st), os.fsencode(os.readlink(full)), FILEMODE_LINK
            fd = os.open(full, os.O_RDONLY | _NOFOLLOW | _BINARY)
            with os.fdopen(fd, "rb") as handle:
                now = os.fstat(handle.fileno())
                if not stat.S_ISREG(now.st_mode) or now.st_size > self.limits.max_file_bytes:
                    return None  # changed under us; the next scan sees it again
                data = handle.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return None  # became a symlink since the stat
            self.skipped[path] = f"cannot be read: {exc.strerror}"
            return None
        mode = FILEMODE_EXEC if now.st_mode & stat.S_IXUSR else FILEMODE_BLOB
        return stat_key(now), data, mode

    # -- the outcome ----------------------------------------------------------

    def touched_paths(self) -> set[str]:
        """Paths whose entry may differ from the old manifest's."""
        if self.hint_touched is not None:
            return self.hint_touched
        return set(self.read) | (self.old.entries.keys() - self.entries.keys())

    def changes(self, touched: set[str]) -> dict[str, Change]:
        """What the tree must change: paths whose blob or mode differ, or gone."""
        old = self.old.entries
        new = self.entries
        changes: dict[str, Change] = {}
        for path in touched:
            before = old.get(path)
            after = new.get(path)
            if before is after:
                continue
            if after is None:
                if before is not None:
                    changes[path] = None
            elif before is None or before[1] != after[1] or before[2] != after[2]:
                changes[path] = (after[1], after[2])
        return changes


def _below_any(path: str, folders: Collection[str]) -> bool:
    """Whether ``path`` lies below one of ``folders``."""
    if not folders:
        return False
    end = path.rfind("/")
    while end > 0:
        path = path[:end]
        if path in folders:
            return True
        end = path.rfind("/")
    return False


class _KnownPaths:
    """Every path the old scan knew (files, folders, ignored and skipped
    names), sorted once, so that what lies below a folder is a range found by
    bisection: forgetting a folder costs what is in it, not what the
    workspace holds. Paths added by this scan are not in it, and need not
    be: a folder walked in this scan is not forgotten again."""

    def __init__(self, scan: Scan) -> None:
        known = set(scan.entries)
        known.update(scan.dirs, scan.ignored, scan.gitignores)
        known.update(key.rstrip("/") for key in scan.skipped)
        self.paths = sorted(known)

    def below(self, folder: str) -> list[str]:
        # The names that start with a prefix are one run of the sorted list.
        prefix = folder + "/"
        paths = self.paths
        index = bisect_left(paths, prefix)
        found = []
        while index < len(paths) and paths[index].startswith(prefix):
            found.append(paths[index])
            index += 1
        return found
