"""Capturing a workspace: which files a checkpoint holds, and reading only
those that changed.

What is captured is the workspace as git would see it (its ``.gitignore``
files, the user's ``.git/info/exclude`` and global excludes, through libgit2),
minus the built-in excludes of ``excludes.py``, minus files over the per-file
cap, minus what does not fit in the workspace budget (kept files first, then
new ones in path order). What was left out, and why, is listed.

Change detection compares each file's stat data (mode, size, mtime, ctime,
inode) with the manifest; only files whose stat data differ are opened. With a
``changed_paths`` hint only those paths are looked at; without one, the whole
workspace is stat-scanned (no file contents read).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pygit2

from server.engine.checkpoints.manifest import Manifest, StatKey, stat_key
from server.engine.checkpoints.objects import ObjectSink, update_tree
from server.engine.checkpoints.scan import Limits, Scan, format_size
from server.engine.checkpoints.shadow import Shadow

__all__ = ["CaptureResult", "Limits", "capture", "format_size", "normalize"]


@dataclass
class CaptureResult:
    manifest: Manifest
    tree: bytes
    full_scan: bool
    files_read: int = 0
    blobs_written: int = 0
    bytes_stored: int = 0
    # paths whose manifest entry may differ from the old manifest's
    touched: set[str] = field(default_factory=set)
    linked: bool = False  # a captured file has other hard links


def normalize(root: str, raw: str) -> str | None:
    """A hint path as workspace-relative posix text ("" = the whole workspace),
    or None when it points outside the workspace."""
    text = os.fspath(raw)
    if os.path.isabs(text):
        text = os.path.relpath(text, root)
    if os.sep != "/":
        text = text.replace(os.sep, "/")
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if ".." in parts:
        return None
    return "/".join(parts)


def capture(
    repo: pygit2.Repository,
    shadow: Shadow,
    old: Manifest,
    limits: Limits,
    stamp_ns: int,
    changed_paths: Iterable[str] | None,
    on_folder: Callable[[str], None] | None = None,
    reserved: dict[str, str] | None = None,
) -> CaptureResult:
    """Scan the workspace against ``old`` and write what changed; ``old`` is not
    modified. ``on_folder`` is told each folder before it is listed;
    ``reserved``: folders never captured (relative path -> what it is)."""
    reserved = reserved or {}
    root = str(shadow.workspace)
    exclude_key = _sync_info_exclude(shadow, old.exclude_key)
    # No reusable ignore decisions: the first scan, or the user's exclude file changed.
    rules_changed = old.tree is None or exclude_key != old.exclude_key
    hints: list[str] | None = None
    if changed_paths is not None and old.tree is not None and not rules_changed:
        hints = []
        for raw in changed_paths:
            rel = normalize(root, raw)
            if rel is None:
                continue
            if rel == "" or rel.rsplit("/", 1)[-1] == ".gitignore":
                hints = None  # the whole workspace, or the ignore rules, changed
                break
            hints.append(rel)
    if hints is not None and _gitignores_changed(root, old.gitignores):
        hints = None  # a .gitignore changed behind the hint's back: look at everything
    if hints is not None and old.empty is None:
        hints = None  # its empty folders are not known yet
    if hints is not None and any(folder in old.dirs for folder in reserved):
        hints = None  # captured before it was known as Sparrow's: drop it all
    sink = ObjectSink(repo, shadow.pack_dir, old.entries, fresh_repo=old.tree is None)
    try:
        scan = Scan(repo, root, old, limits, fresh=rules_changed)
        scan.on_folder = on_folder
        scan.reserved = reserved
        if hints is not None:
            scan.hinted(hints)
        else:
            scan.full()
        if not scan.fresh and scan.gitignores != old.gitignores:
            # A .gitignore changed: decide every path again under the new rules.
            scan = Scan(repo, root, old, limits, fresh=True)
            scan.on_folder = on_folder
            scan.reserved = reserved
            scan.full()
            hints = None
        scan.read_candidates(sink, stamp_ns)
        touched = scan.touched_paths()
        changes = scan.changes(touched)
        tree = old.tree
        if tree is None or changes:
            tree = update_tree(repo, old.tree, changes, sink)
        sink.finish()
    except BaseException:
        sink.abort()
        raise
    manifest = Manifest(
        tree=tree,
        entries=scan.entries,
        total=scan.total,
        skipped=scan.skipped,
        gitignores=scan.gitignores,
        ignored=scan.ignored,
        dirs=scan.dirs,
        empty=scan.empty,
        exclude_key=exclude_key,
        head=old.head,
    )
    return CaptureResult(
        manifest=manifest,
        tree=tree,
        full_scan=hints is None,
        files_read=sink.files_read,
        blobs_written=sink.blobs_written,
        bytes_stored=sink.bytes_stored,
        touched=touched,
        linked=scan.linked,
    )


def _gitignores_changed(root: str, known: dict[str, StatKey]) -> bool:
    for path, key in known.items():
        try:
            if stat_key(os.lstat(os.path.join(root, path))) != key:
                return True
        except OSError:
            return True
    return False


def _sync_info_exclude(shadow: Shadow, known: StatKey | None) -> StatKey | None:
    """Mirror the workspace's ``.git/info/exclude`` (read only) into the shadow
    repository when it changed; return its stat key (None when absent)."""
    source = shadow.workspace / ".git" / "info" / "exclude"
    try:
        key: StatKey | None = stat_key(os.stat(source))
    except OSError:
        key = None
    if key == known:
        return key
    target = shadow.gitdir / "info" / "exclude"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        target.write_bytes(source.read_bytes() if key is not None else b"")
    except OSError:
        target.write_bytes(b"")
    return key
