"""The manifest: what the last scan of a workspace found, so the next one
re-reads only what changed.

For each captured path it keeps the stat data seen when the file was read
(mode, size, mtime, ctime, inode), the blob id, the git mode and the size: a
file whose stat data still match is not opened again. It also keeps the tree
those entries make, the newest checkpoint, the paths skipped and the cached
ignore decisions.

On disk (in the shadow repository's ``sparrow/`` folder) it is a base file,
written whole now and then, and a journal of the entries changed since,
appended at each checkpoint; a process keeps the manifest in memory and
reloads it when another process has written. Any saved version is safe to use:
entries are only trusted while a file's stat data match them, so an old or
lost manifest costs re-reading, never a wrong snapshot. Journal records carry
the generation of their base, so a base written after them makes them void.
"""

from __future__ import annotations

import marshal
import os
import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 2
_JOURNAL_MIN = 256 * 1024  # a journal longer than this and a quarter of the base is folded in

# (st_mode, size, mtime_ns, ctime_ns, inode); size -1 marks a smudged entry.
StatKey = tuple[int, int, int, int, int]
# (stat key, blob id (20 raw bytes), git file mode, size in bytes)
Entry = tuple[StatKey, bytes, int, int]


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@dataclass
class Manifest:
    tree: bytes | None = None  # raw id of the tree the entries make
    entries: dict[str, Entry] = field(default_factory=dict)
    total: int = 0  # bytes of all entries
    skipped: dict[str, str] = field(default_factory=dict)
    gitignores: dict[str, StatKey] = field(default_factory=dict)
    ignored: set[str] = field(default_factory=set)  # ignored paths met (files and folders)
    dirs: set[str] = field(default_factory=set)  # folders walked (not ignored)
    exclude_key: StatKey | None = None  # stat of the user's .git/info/exclude
    head: tuple[str, bytes] | None = None  # newest checkpoint: (id, raw tree id)
    # Folders with nothing in them (git keeps none; a rewind makes them again).
    # None: not known (a manifest from before they were kept): scan it all.
    empty: set[str] | None = None

    def small_fields(self) -> dict[str, Any]:
        return {
            "tree": self.tree,
            "total": self.total,
            "skipped": self.skipped,
            "gitignores": self.gitignores,
            "exclude_key": self.exclude_key,
            "head": self.head,
        }


@dataclass
class _Loaded:
    key: tuple[StatKey, StatKey | None]
    manifest: Manifest
    generation: bytes
    journal_ok: bool


_cache: dict[Path, _Loaded] = {}
_cache_lock = threading.Lock()


def _journal(path: Path) -> Path:
    return path.with_name(path.name + ".journal")


def _file_key(path: Path) -> StatKey | None:
    try:
        return stat_key(os.stat(path))
    except OSError:
        return None


def _apply(manifest: Manifest, record: dict[str, Any]) -> None:
    """Replay one journal record onto a manifest being loaded (owned here)."""
    entries = manifest.entries
    for path, entry in record["set"].items():
        if entry is None:
            entries.pop(path, None)
        else:
            entries[path] = entry
    for name in manifest.small_fields():
        setattr(manifest, name, record[name])
    manifest.dirs = record.get("dirs", manifest.dirs)
    manifest.ignored = record.get("ignored", manifest.ignored)
    manifest.empty = record.get("empty", manifest.empty)


def load(path: Path) -> Manifest:
    """The saved manifest, or an empty one when missing or unreadable (the
    next scan then reads every file). The caller holds the workspace lock and
    must not mutate what it gets."""
    base_key = _file_key(path)
    if base_key is None:
        return Manifest()
    key = (base_key, _file_key(_journal(path)))
    with _cache_lock:
        cached = _cache.get(path)
    if cached is not None and cached.key == key:
        return cached.manifest
    try:
        data = marshal.loads(path.read_bytes())
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return Manifest()
        generation = data.pop("generation")
        data.pop("format")
        manifest = Manifest(**data)
    except (OSError, ValueError, EOFError, TypeError, KeyError):
        return Manifest()
    journal_ok = True
    try:
        with _journal(path).open("rb") as handle:
            while True:
                try:
                    record = marshal.load(handle)
                except EOFError:
                    break
                if not isinstance(record, dict) or record.get("generation") != generation:
                    journal_ok = False
                    break
                _apply(manifest, record)
    except FileNotFoundError:
        pass
    except (OSError, ValueError, TypeError, KeyError):
        journal_ok = False  # a torn last record: what came before it stands
    with _cache_lock:
        _cache[path] = _Loaded(key, manifest, generation, journal_ok)
    return manifest


def save(
    path: Path,
    manifest: Manifest,
    *,
    base: Manifest | None = None,
    changed: Iterable[str] | None = None,
) -> None:
    """Record ``manifest``. When ``base`` is the manifest loaded from ``path``
    and ``changed`` names every path whose entry may differ from it, only that
    difference is appended to the journal. The caller holds the workspace lock
    and hands over ``manifest`` for good."""
    with _cache_lock:
        cached = _cache.get(path)
    journal = _journal(path)
    if (
        cached is not None
        and base is not None
        and changed is not None
        and cached.manifest is base
        and cached.journal_ok
        and cached.key == (_file_key(path), _file_key(journal))
        and (cached.key[1] is None or cached.key[1][1] < max(_JOURNAL_MIN, cached.key[0][1] // 4))
    ):
        record: dict[str, Any] = {
            "generation": cached.generation,
            "set": {p: manifest.entries.get(p) for p in changed},
            **manifest.small_fields(),
        }
        if manifest.dirs != base.dirs:
            record["dirs"] = manifest.dirs
        if manifest.ignored != base.ignored:
            record["ignored"] = manifest.ignored
        if manifest.empty != base.empty:
            record["empty"] = manifest.empty
        fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, marshal.dumps(record))
        finally:
            os.close(fd)
        key = (cached.key[0], _file_key(journal))
        with _cache_lock:
            _cache[path] = _Loaded(key, manifest, cached.generation, True)
        return
    _save_whole(path, manifest)


def _save_whole(path: Path, manifest: Manifest) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    generation = secrets.token_bytes(8)
    data = {
        "format": FORMAT,
        "generation": generation,
        "entries": manifest.entries,
        "dirs": manifest.dirs,
        "ignored": manifest.ignored,
        "empty": manifest.empty,
        **manifest.small_fields(),
    }
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(marshal.dumps(data))
    os.replace(tmp, path)  # from here on the old journal's records are void
    _journal(path).unlink(missing_ok=True)
    key = (_file_key(path), None)
    assert key[0] is not None
    with _cache_lock:
        _cache[path] = _Loaded((key[0], None), manifest, generation, True)


def forget(path: Path) -> None:
    """Drop the cached copy."""
    with _cache_lock:
        _cache.pop(path, None)
