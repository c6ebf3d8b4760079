"""The paths of a workspace, indexed for ``@`` completion in the composer.

Built once per workspace in a background thread: a walk that leaves out
``.git``, what the checkpoints never capture (dependency folders, virtual
environments, tool caches, nested repositories' own ``.git``), Sparrow's own
folders, and what git ignores (``.gitignore`` files, asked through libgit2 on a
bare repository of the index's own whose work tree is set to the workspace,
as the checkpoints do: nothing is ever written into the workspace).

Kept fresh cheaply: on Linux an inotify watch (the checkpoints' ``Watch``)
over every indexed folder reports what changed, and each query applies those
changes before it searches; a changed ``.gitignore``, a lost event or a
refused watch means a rebuild in the background, the old paths answering
meanwhile. Without a watch, an index older than ``STALE_SECONDS`` is rebuilt
in the background at its next query.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections import OrderedDict
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from server.engine.path_search import PathSnapshot, Suggestion
from server.engine.workspace import own_folders_inside

if TYPE_CHECKING:
    from types import ModuleType

    import pygit2

    from server.engine.checkpoints.watch import Watch

log = logging.getLogger(__name__)

STALE_SECONDS = 15.0
# inotify instances are few (128 per user): a handful of indexed workspaces.
MAX_INDEXES = 4
_INIT_LOCK = threading.Lock()


class PathIndex:
    """The indexed paths of one workspace."""

    def __init__(self, root: Path, rules_repo: Path, own: dict[Path, str]) -> None:
        self.root = root
        self._rules_repo = rules_repo
        self._reserved = {
            folder for folder in own_folders_inside(root, own) if folder
        }  # Sparrow's own folders inside the workspace
        self._lock = threading.Lock()
        self._entries: dict[str, bool] = {}  # path -> is a folder
        self._snapshot: PathSnapshot | None = None
        self._dirty = False  # entries changed since the snapshot
        self._snapping = False  # a new snapshot is being sorted
        self._built = threading.Event()
        self._building = False
        self._rebuild = False  # asked again while a build ran
        self._built_at = 0.0
        self._watch: Watch | None = None
        self._repo: pygit2.Repository | None = None
        self.builds = 0

    # -- asking --------------------------------------------------------------

    def start(self) -> None:
        """Build in the background unless a build runs or is done."""
        with self._lock:
            if self._building or self._built.is_set():
                return
        self._spawn()

    def wait(self, timeout: float) -> bool:
        """Whether the first build is done, waiting up to ``timeout`` seconds."""
        return self._built.wait(timeout)

    @property
    def ready(self) -> bool:
        return self._built.is_set()

    def search(self, query: str, limit: int = 20) -> list[Suggestion]:
        self.refresh()
        with self._lock:
            snapshot = self._snapshot
        return [] if snapshot is None else snapshot.search(query, limit)

    def paths(self) -> dict[str, bool]:
        """Every indexed path (a copy), for tests and tools."""
        self.refresh()
        with self._lock:
            return dict(self._entries)

    def refresh(self) -> None:
        """Apply what the watch saw; or rebuild, in the background, when it cannot tell."""
        if not self._built.is_set():
            return
        watch = self._watch
        if watch is None:
            if time.monotonic() - self._built_at > STALE_SECONDS:
                self._spawn()
            return
        try:
            with self._lock:
                changed = watch.drain()
        except _watch().WatchBroken:
            self._spawn()
            return
        if not changed:
            return
        if any(path.rsplit("/", 1)[-1] == ".gitignore" for path in changed):
            self._spawn()  # the rules changed: decide every path again
            return
        for path in sorted(changed):
            self._update(path)
        self._resnap()

    def _resnap(self) -> None:
        """Sort the changed paths into a new snapshot, in the background: a query
        meanwhile answers from the one before (a fraction of a second old)."""
        with self._lock:
            if not self._dirty or self._snapping:
                return
            self._snapping = True
        threading.Thread(target=self._snap_loop, name="path-index-snapshot", daemon=True).start()

    def _snap_loop(self) -> None:
        try:
            while True:
                with self._lock:
                    if not self._dirty:
                        return
                    self._dirty = False
                    entries = list(self._entries.items())
                    builds = self.builds
                snapshot = PathSnapshot(entries)
                with self._lock:
                    if builds == self.builds:  # else a rebuild's snapshot is newer
                        self._snapshot = snapshot
        finally:
            with self._lock:
                self._snapping = False

    def close(self) -> None:
        with self._lock:
            watch, self._watch = self._watch, None
            repo, self._repo = self._repo, None
        if watch is not None:
            watch.close()
        if repo is not None:
            repo.free()

    # -- building ------------------------------------------------------------

    def _spawn(self) -> None:
        with self._lock:
            if self._building:
                self._rebuild = True
                return
            self._building = True
        threading.Thread(target=self._build_loop, name="path-index", daemon=True).start()

    def _build_loop(self) -> None:
        try:
            while True:
                with self._lock:
                    self._rebuild = False
                try:
                    self._build()
                except Exception:
                    log.exception("indexing the paths of %s failed", self.root)
                with self._lock:
                    if not self._rebuild:
                        return
        finally:
            with self._lock:
                self._building = False
            self._built.set()

    def _build(self) -> None:
        repo = self._open_rules()
        watch = self._new_watch()
        entries: dict[str, bool] = {}
        self._walk("", repo, watch, entries)
        snapshot = PathSnapshot(entries.items())
        with self._lock:
            old_watch, old_repo = self._watch, self._repo
            self._entries, self._snapshot, self._dirty = entries, snapshot, False
            self._watch, self._repo = watch, repo
            self._built_at = time.monotonic()
            self.builds += 1
        if old_watch is not None:
            old_watch.close()
        if old_repo is not None and old_repo is not repo:
            old_repo.free()

    def _open_rules(self) -> pygit2.Repository:
        import pygit2  # with the first index, not at the server's start

        gitdir = self._rules_repo
        with _INIT_LOCK:  # the indexes of two workspaces may start at once
            if not (gitdir / "HEAD").exists():
                gitdir.parent.mkdir(parents=True, exist_ok=True)
                pygit2.init_repository(str(gitdir), bare=True)
        repo = pygit2.Repository(str(gitdir))
        repo.workdir = str(self.root)  # in memory only: no gitlink, no config written
        return repo

    def _new_watch(self) -> Watch | None:
        kernel = _watch()
        if kernel.file_system_of(str(self.root)) not in kernel.LOCAL_FILE_SYSTEMS:
            return None
        try:
            made: Watch = kernel.Watch(str(self.root))
        except kernel.WatchBroken:
            return None
        return made

    def _walk(
        self, start: str, repo: pygit2.Repository, watch: Watch | None, entries: dict[str, bool]
    ) -> Watch | None:
        """Index ``start`` and below into ``entries``; the watch, or None if it gave out."""
        stack = [start]
        while stack:
            rel = stack.pop()
            if watch is not None:
                try:
                    watch.add(rel)  # before the listing: a change after it raises an event
                except _watch().WatchBroken:
                    watch.close()
                    watch = None  # the watch limit: staleness decides instead
            try:
                with os.scandir(os.path.join(self.root, rel) if rel else self.root) as listing:
                    found = list(listing)
            except OSError:
                continue
            if rel and _left_out_by_content({entry.name for entry in found}):
                entries.pop(rel, None)
                continue
            prefix = rel + "/" if rel else ""
            for entry in found:
                kept = self._keep(prefix + entry.name, entry.name, _is_dir(entry), repo)
                if kept is None:
                    continue
                entries[prefix + entry.name] = kept
                if kept:
                    stack.append(prefix + entry.name)
        return watch

    def _keep(self, path: str, name: str, is_dir: bool, repo: pygit2.Repository) -> bool | None:
        """Whether ``path`` is a folder (True) or a file (False) to index; None to leave out."""
        if _excludes().is_git_dir_name(name):
            return None
        if is_dir and (_excludes().excluded_dir(path, name) is not None or path in self._reserved):
            return None
        try:
            if repo.path_is_ignored(path + "/" if is_dir else path):
                return None
        except (UnicodeEncodeError, _git_error()):
            return None
        return is_dir

    # -- keeping fresh ---------------------------------------------------------

    def _update(self, path: str) -> None:
        """One path the watch reported: add it (and what is below), or drop it."""
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        try:
            st = os.lstat(os.path.join(self.root, path))
        except OSError:
            st = None
        with self._lock:
            repo, watch = self._repo, self._watch
            if repo is None:
                return
            self._drop(path)
            if st is None or (parent and self._entries.get(parent) is not True):
                return  # gone, or below a folder that is left out
            kept = self._keep(path, path.rsplit("/", 1)[-1], stat.S_ISDIR(st.st_mode), repo)
            if kept is None:
                return
            self._entries[path] = kept
            self._dirty = True
            if kept:
                found: dict[str, bool] = {}
                self._watch = self._walk(path, repo, watch, found)
                self._entries.update(found)

    def _drop(self, path: str) -> None:
        if self._entries.pop(path, None) is None:
            return
        self._dirty = True
        below = path + "/"
        for known in [known for known in self._entries if known.startswith(below)]:
            del self._entries[known]


# The checkpoints package loads pygit2: fetched with the first index, not at start-up.
@cache
def _excludes() -> ModuleType:
    from server.engine.checkpoints import excludes

    return excludes


@cache
def _watch() -> ModuleType:
    from server.engine.checkpoints import watch

    return watch


def _git_error() -> type[Exception]:
    import pygit2

    return pygit2.GitError


def _left_out_by_content(names: set[str]) -> bool:
    """A virtual environment or a shadow repository. Unlike a checkpoint, the index
    keeps nested repositories: a folder of projects is a fine workspace to name paths in."""
    return _excludes().VENV_MARKER in names or names >= _excludes().SHADOW_MARKERS


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


class PathIndexes:
    """This process's indexes, the most recently asked ``MAX_INDEXES`` workspaces."""

    def __init__(self, cache: Path, own: dict[Path, str]) -> None:
        self._rules_repo = cache / "path-index.git"
        self.own = own
        self._lock = threading.Lock()
        self._indexes: OrderedDict[Path, PathIndex] = OrderedDict()

    def get(self, root: Path) -> PathIndex:
        """The index of ``root`` (a resolved folder), its build started."""
        with self._lock:
            index = self._indexes.get(root)
            if index is None:
                index = PathIndex(root, self._rules_repo, self.own)
                self._indexes[root] = index
                while len(self._indexes) > MAX_INDEXES:
                    _, oldest = self._indexes.popitem(last=False)
                    oldest.close()
            self._indexes.move_to_end(root)
        index.start()
        return index

    def close(self) -> None:
        with self._lock:
            indexes = list(self._indexes.values())
            self._indexes.clear()
        for index in indexes:
            index.close()
