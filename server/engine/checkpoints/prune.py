"""Freeing the space of deleted checkpoints.

Each checkpoint is a parentless commit kept alive by one ref,
``refs/sparrow/<id>``; deleting the ref makes what only it used unreachable.
``collect_garbage`` then marks everything reachable from the remaining refs
and from the manifest's tree (the base of the next checkpoint), and:

- deletes unreachable loose objects (what incremental checkpoints write);
- rewrites a pack that holds unreachable objects (or all packs, when there are
  many) into one new pack of its reachable objects, then deletes the old ones.

It runs under the workspace lock, so no writer is adding objects meanwhile.
The trade-off: marking walks every distinct tree (not file) of the kept
checkpoints, and rewriting a pack reads it whole; both happen only when
pruning, never while checkpointing. Packs have no deltas, so many versions of
one big file each cost their compressed size until pruned.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pygit2

from server.engine.checkpoints import manifest as manifests
from server.engine.checkpoints.manifest import Manifest
from server.engine.checkpoints.model import Checkpoint
from server.engine.checkpoints.pack import PackWriter, read_pack_ids
from server.engine.checkpoints.shadow import REF_PREFIX, Shadow

_DAY = 86_400.0

MAX_PACKS = 16
_PACK_KIND = {
    pygit2.enums.ObjectType.COMMIT: 1,
    pygit2.enums.ObjectType.TREE: 2,
    pygit2.enums.ObjectType.BLOB: 3,
    pygit2.enums.ObjectType.TAG: 4,
}


@dataclass(frozen=True)
class GarbageStats:
    objects_removed: int
    bytes_freed: int


def checkpoint_refs(repo: pygit2.Repository) -> dict[str, pygit2.Oid]:
    """Checkpoint id -> commit id, for every checkpoint ref."""
    found: dict[str, pygit2.Oid] = {}
    for ref in repo.references.iterator():
        if ref.name.startswith(REF_PREFIX):
            target = ref.target
            assert isinstance(target, pygit2.Oid)
            found[ref.name.removeprefix(REF_PREFIX)] = target
    return found


def reachable_objects(repo: pygit2.Repository, roots: list[pygit2.Oid]) -> set[bytes]:
    """Raw ids of every object reachable from ``roots`` (commits or trees)."""
    seen: set[bytes] = set()
    trees: list[pygit2.Oid] = []
    for root in roots:
        obj = repo.get(root)
        if obj is None:
            continue
        seen.add(bytes(root.raw))
        if isinstance(obj, pygit2.Commit):
            trees.append(obj.tree_id)
        elif isinstance(obj, pygit2.Tree):
            seen.discard(bytes(root.raw))
            trees.append(root)
    tree_type = pygit2.enums.ObjectType.TREE
    while trees:
        oid = trees.pop()
        raw = bytes(oid.raw)
        if raw in seen:
            continue
        seen.add(raw)
        tree = repo[oid]
        assert isinstance(tree, pygit2.Tree)
        for entry in tree:
            if entry.type == tree_type:
                trees.append(entry.id)
            else:
                seen.add(bytes(entry.id.raw))
    return seen


def _loose_objects(objects: Path) -> dict[bytes, Path]:
    found: dict[bytes, Path] = {}
    for fanout in range(256):
        folder = objects / f"{fanout:02x}"
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    if len(entry.name) == 38:
                        try:
                            found[bytes.fromhex(folder.name + entry.name)] = Path(entry.path)
                        except ValueError:
                            continue
        except FileNotFoundError:
            continue
    return found


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def collect_garbage(shadow: Shadow, keep_tree: bytes | None) -> GarbageStats:
    """Delete what no checkpoint ref and not the manifest tree can reach."""
    objects = shadow.gitdir / "objects"
    repo = shadow.open(bare=True)
    try:
        roots = list(checkpoint_refs(repo).values())
        if keep_tree is not None:
            roots.append(pygit2.Oid(raw=keep_tree))
        live = reachable_objects(repo, roots)
        loose = _loose_objects(objects)
        packs = {idx: set(read_pack_ids(idx)) for idx in sorted(shadow.pack_dir.glob("pack-*.idx"))}
        dirty = [idx for idx, ids in packs.items() if not ids <= live]
        if len(packs) > MAX_PACKS:
            dirty = list(packs)
        new_pack: Path | None = None
        if dirty:
            keep = set().union(*(packs[idx] & live for idx in dirty))
            keep |= live & loose.keys()
            writer = PackWriter(shadow.pack_dir)
            try:
                for raw in sorted(keep):
                    kind, data = repo.odb.read(pygit2.Oid(raw=raw))
                    writer.add(raw, _PACK_KIND[kind], data)
                new_pack = writer.finish()
            except BaseException:
                writer.abort()
                raise
    finally:
        repo.free()  # before deleting packs it may have mapped (Windows)
    removed = 0
    freed = 0
    for raw, path in loose.items():
        if raw in live and not dirty:
            continue  # still needed, and no new pack holds it
        freed += _size(path)
        path.unlink(missing_ok=True)
        removed += raw not in live
    if new_pack is not None:
        freed -= _size(new_pack) + _size(new_pack.with_suffix(".idx"))
        dirty = [idx for idx in dirty if idx != new_pack.with_suffix(".idx")]
    for idx in dirty:
        dead = len(packs[idx] - live)
        removed += dead
        for path in (idx.with_suffix(".pack"), idx):
            freed += _size(path)
            path.unlink(missing_ok=True)
    for stray in shadow.pack_dir.glob("tmp_*"):
        stray.unlink(missing_ok=True)
    for fanout in range(256):
        with contextlib.suppress(OSError):
            (objects / f"{fanout:02x}").rmdir()
    return GarbageStats(objects_removed=removed, bytes_freed=max(freed, 0))


def beyond_limits(
    checkpoints: Iterable[Checkpoint], *, max_age_days: float | None, keep: int | None
) -> dict[str, list[str]]:
    """The ids to delete, by workspace: older than ``max_age_days``, or beyond the
    newest ``keep`` of their workspace (``checkpoints`` newest first)."""
    cutoff = time.time() - max_age_days * _DAY if max_age_days is not None else None
    doomed: dict[str, list[str]] = {}
    by_workspace: dict[str, int] = {}
    for checkpoint in checkpoints:
        rank = by_workspace.get(checkpoint.workspace, 0)
        by_workspace[checkpoint.workspace] = rank + 1
        too_many = keep is not None and rank >= keep
        too_old = cutoff is not None and checkpoint.created_at < cutoff
        if too_many or too_old:
            doomed.setdefault(checkpoint.workspace, []).append(checkpoint.id)
    return doomed


def drop_refs(
    shadow: Shadow,
    kept: set[str],
    manifest_of: Callable[[pygit2.Repository, Shadow], Manifest],
) -> GarbageStats:
    """Delete the refs of checkpoints not in ``kept`` (those just deleted, and
    any a crash left behind), then collect the garbage. Lock held."""
    repo = shadow.open(bare=True)
    try:
        for checkpoint_id in checkpoint_refs(repo):
            if checkpoint_id not in kept:
                repo.references.delete(REF_PREFIX + checkpoint_id)
        keep_tree = manifest_of(repo, shadow).tree
    finally:
        repo.free()
    if not kept and not shadow.workspace.is_dir():
        # Nothing left to rewind to, and no workspace to checkpoint again.
        manifests.forget(shadow.manifest_path)
        size = size_of(shadow.gitdir)
        shutil.rmtree(shadow.gitdir, ignore_errors=True)
        return GarbageStats(objects_removed=0, bytes_freed=size)
    return collect_garbage(shadow, keep_tree)


def size_of(folder: Path) -> int:
    """The bytes of every file under ``folder``."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
