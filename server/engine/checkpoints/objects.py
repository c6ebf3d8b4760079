"""Writing the objects of a checkpoint: blobs and trees, loose while few, one
pack when many; trees rebuilt only along the paths that changed.

Trees are serialised here rather than with libgit2's TreeBuilder, so that a
first checkpoint's hundreds of trees go into the same pack as its blobs
instead of one loose file each. Entry names are checked as libgit2 would
(no ``.git``, no '/', no NUL), so a tree naming git internals is never made.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

import pygit2

from server.engine.checkpoints.excludes import is_git_dir_name
from server.engine.checkpoints.manifest import Entry
from server.engine.checkpoints.pack import OBJ_BLOB, OBJ_TREE, PackWriter

# Below this many new objects in one capture, loose objects are cheaper than a pack.
PACK_MIN_OBJECTS = 64
# Past this many files read, index the previous snapshot's blob ids in memory
# rather than asking the object database about each (about 13 us a miss).
_KNOWN_AFTER = 256
_BUFFER_BYTES = 8 << 20

FILEMODE_TREE = 0o040000
FILEMODE_BLOB = 0o100644
FILEMODE_EXEC = 0o100755
FILEMODE_LINK = 0o120000

_LOOSE_TYPE = {OBJ_BLOB: pygit2.enums.ObjectType.BLOB, OBJ_TREE: pygit2.enums.ObjectType.TREE}


def _has_no_objects(repo: pygit2.Repository) -> bool:
    objects = Path(repo.path) / "objects"
    try:
        names = {p.name for p in objects.iterdir()}
        return names <= {"info", "pack"} and not any((objects / "pack").iterdir())
    except OSError:
        return False


class ObjectSink:
    """Stores objects not in the repository yet and counts what it did.
    Nothing is readable through libgit2 before ``finish``."""

    def __init__(
        self,
        repo: pygit2.Repository,
        pack_dir: Path,
        snapshot: Mapping[str, Entry] | None = None,
        *,
        fresh_repo: bool = False,
    ) -> None:
        self._repo = repo
        self._pack_dir = pack_dir
        self._snapshot = snapshot or {}
        self._known: set[bytes] | None = None  # blob ids certainly present (the snapshot's)
        # A repository with no objects yet: asking it about each object is wasted time.
        self._empty = fresh_repo and _has_no_objects(repo)
        self._seen: set[bytes] = set()
        self._buffer: list[tuple[bytes, int, bytes]] = []
        self._buffered = 0
        self._pack: PackWriter | None = None
        self.files_read = 0
        self.blobs_written = 0
        self.bytes_stored = 0

    def blob(self, data: bytes) -> bytes:
        """The raw id of ``data`` as a blob (a file's content just read), stored when new."""
        self.files_read += 1
        if self._known is None and self.files_read > _KNOWN_AFTER:
            self._known = {entry[1] for entry in self._snapshot.values()}
        raw = bytes(pygit2.hash(data).raw)
        if self._known is not None and raw in self._known:
            return raw
        if self._store(raw, OBJ_BLOB, data):
            self.blobs_written += 1
            self.bytes_stored += len(data)
        return raw

    def tree(self, body: bytes) -> bytes:
        raw = hashlib.sha1(b"tree %d\x00" % len(body) + body).digest()
        self._store(raw, OBJ_TREE, body)
        return raw

    def _store(self, raw: bytes, kind: int, data: bytes) -> bool:
        if raw in self._seen:
            return False
        self._seen.add(raw)
        if not self._empty and pygit2.Oid(raw=raw) in self._repo:
            return False
        if self._pack is not None:
            self._pack.add(raw, kind, data)
            return True
        self._buffer.append((raw, kind, data))
        self._buffered += len(data)
        if len(self._buffer) >= PACK_MIN_OBJECTS or self._buffered >= _BUFFER_BYTES:
            self._pack = PackWriter(self._pack_dir)
            for buffered in self._buffer:
                self._pack.add(*buffered)
            self._buffer, self._buffered = [], 0
        return True

    def finish(self) -> None:
        """Make every object added readable."""
        if self._pack is not None:
            self._pack.finish()
            self._pack = None
        odb = self._repo.odb
        for _, kind, data in self._buffer:
            odb.write(_LOOSE_TYPE[kind], data)
        self._buffer, self._buffered = [], 0

    def abort(self) -> None:
        if self._pack is not None:
            self._pack.abort()
            self._pack = None
        self._buffer = []


Change = tuple[bytes, int] | None  # (raw blob id, git mode), or None: removed
TreeEntries = dict[str, tuple[bytes, int]]


# Trees never change (an id names one content), so their entries can be kept
# across operations and repositories: a checkpoint, its diff and a rewind keep
# reading the same root and folder trees.
_TREE_CACHE_SIZE = 256
_tree_cache: OrderedDict[bytes, TreeEntries] = OrderedDict()
_tree_cache_lock = threading.Lock()


def tree_entries(repo: pygit2.Repository, raw: bytes | None) -> TreeEntries:
    """The entries of a stored tree: name -> (raw id, git mode). Do not mutate."""
    if raw is None:
        return {}
    with _tree_cache_lock:
        cached = _tree_cache.get(raw)
        if cached is not None:
            _tree_cache.move_to_end(raw)
            return cached
    tree = repo[pygit2.Oid(raw=raw)]
    assert isinstance(tree, pygit2.Tree)
    entries = {
        str(entry.name): (bytes(entry.id.raw), int(entry.filemode))
        for entry in tree
        if entry.name is not None
    }
    with _tree_cache_lock:
        _tree_cache[raw] = entries
        while len(_tree_cache) > _TREE_CACHE_SIZE:
            _tree_cache.popitem(last=False)
    return entries


def _valid_name(name: str) -> bool:
    return name not in ("", ".", "..") and "/" not in name and "\x00" not in name


def serialize_tree(entries: TreeEntries) -> bytes:
    """A tree object's body, entries in git's order (a folder sorts as 'name/')."""
    parts = []
    for name, (raw, mode) in entries.items():
        if not _valid_name(name) or is_git_dir_name(name):
            raise ValueError(f"invalid name for a tree entry: {name!r}")
        encoded = name.encode("utf-8")
        key = encoded + b"/" if mode == FILEMODE_TREE else encoded
        parts.append((key, b"%o %s\x00%s" % (mode, encoded, raw)))
    parts.sort()
    return b"".join(part for _, part in parts)


def update_tree(
    repo: pygit2.Repository,
    base: bytes | None,
    changes: Mapping[str, Change],
    sink: ObjectSink | None = None,
) -> bytes:
    """The raw id of the tree ``base`` with ``changes`` applied (paths use '/').

    Only the trees along changed paths are rebuilt; unchanged subtrees are
    reused by id. A file replacing a folder (or the reverse) is handled. Without
    a ``sink``, the new trees are written at once.
    """
    own = sink is None
    if sink is None:
        sink = ObjectSink(repo, Path(repo.path) / "objects" / "pack")
    try:
        new = _update(repo, base, changes, sink)
        result = new if new is not None else sink.tree(b"")
        if own:
            sink.finish()
    except BaseException:
        if own:
            sink.abort()
        raise
    return result


def _update(
    repo: pygit2.Repository, base: bytes | None, changes: Mapping[str, Change], sink: ObjectSink
) -> bytes | None:
    direct: dict[str, Change] = {}
    nested: dict[str, dict[str, Change]] = {}
    for path, change in changes.items():
        head, sep, rest = path.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = change
        else:
            direct[head] = change
    before = tree_entries(repo, base)
    entries = dict(before)
    for name, change in direct.items():
        if change is not None:
            entries[name] = change
        elif name in entries and entries[name][1] != FILEMODE_TREE:
            del entries[name]  # a file gone (a folder goes when its files do)
    for name, sub in nested.items():
        if direct.get(name) is not None:
            continue  # a file took the folder's place: its old entries went with it
        existing = before.get(name)
        subtree = existing[0] if existing is not None and existing[1] == FILEMODE_TREE else None
        new = _update(repo, subtree, sub, sink)
        if new is None:
            entries.pop(name, None)
        else:
            entries[name] = (new, FILEMODE_TREE)
    if not entries:
        return None
    return sink.tree(serialize_tree(entries))
