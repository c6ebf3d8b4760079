"""What differs between two snapshots, per file, text and binary aware.

Trees are compared here, entry by entry, descending only into subtrees whose
ids differ: a change to one file of 20,000 costs a look at two small trees,
where libgit2's tree-to-tree diff walks every entry.
"""

from __future__ import annotations

import pygit2

from server.engine.checkpoints.model import DiffStatus, FileDiff
from server.engine.checkpoints.objects import FILEMODE_TREE, tree_entries

Side = tuple[bytes, int] | None  # (raw blob id, git mode), or absent
TreeChange = tuple[str, Side, Side]  # (path, before, after)


def tree_changes(repo: pygit2.Repository, old: bytes | None, new: bytes | None) -> list[TreeChange]:
    """Every file (blob or symlink) whose presence, content or mode differ, by path."""
    found: list[TreeChange] = []
    if old != new:
        _compare(repo, old, new, "", found)
    found.sort(key=lambda change: change[0])
    return found


def _compare(
    repo: pygit2.Repository,
    old: bytes | None,
    new: bytes | None,
    prefix: str,
    out: list[TreeChange],
) -> None:
    before = tree_entries(repo, old)
    after = tree_entries(repo, new)
    for name in before.keys() | after.keys():
        a = before.get(name)
        b = after.get(name)
        if a == b:
            continue
        path = prefix + name
        a_tree = a is not None and a[1] == FILEMODE_TREE
        b_tree = b is not None and b[1] == FILEMODE_TREE
        if a_tree or b_tree:
            _compare(
                repo,
                a[0] if a is not None and a_tree else None,
                b[0] if b is not None and b_tree else None,
                path + "/",
                out,
            )
        a_file = None if a_tree else a
        b_file = None if b_tree else b
        if a_file is not None or b_file is not None:
            out.append((path, a_file, b_file))


def changed_paths(repo: pygit2.Repository, old: bytes | None, new: bytes) -> list[str]:
    """The paths whose content, mode or presence differ (no contents read)."""
    return [path for path, _, _ in tree_changes(repo, old, new)]


def _status(before: Side, after: Side) -> DiffStatus:
    if before is None:
        return "added"
    if after is None:
        return "deleted"
    if before[0] == after[0]:
        return "mode"
    return "modified"


def _blob(repo: pygit2.Repository, side: Side) -> pygit2.Blob | None:
    if side is None:
        return None
    blob = repo[pygit2.Oid(raw=side[0])]
    assert isinstance(blob, pygit2.Blob)
    return blob


def file_diff(
    repo: pygit2.Repository, path: str, before: Side, after: Side, context_lines: int = 3
) -> FileDiff:
    status = _status(before, after)
    old, new = _blob(repo, before), _blob(repo, after)
    header = f"diff --git a/{path} b/{path}\n"
    if status == "mode":
        assert before is not None and after is not None and old is not None
        return FileDiff(
            path=path,
            status=status,
            binary=old.is_binary,
            patch=f"{header}old mode {before[1]:o}\nnew mode {after[1]:o}\n",
            old_size=old.size,
            new_size=old.size,
        )
    patch = pygit2.Patch.create_from(
        old, new, old_as_path=path, new_as_path=path, context_lines=context_lines
    )
    binary = bool(patch.delta.is_binary) or any(b is not None and b.is_binary for b in (old, new))
    return FileDiff(
        path=path,
        status=status,
        binary=binary,
        patch="" if binary else patch.text or "",
        old_size=old.size if old is not None else 0,
        new_size=new.size if new is not None else 0,
    )


def diff_trees(
    repo: pygit2.Repository, old: bytes | None, new: bytes, context_lines: int = 3
) -> list[FileDiff]:
    """Per-file diffs from ``old`` to ``new``, sorted by path. Binary files
    (with NUL bytes, or marked binary by the workspace's .gitattributes) get
    an empty patch."""
    return [
        file_diff(repo, path, before, after, context_lines)
        for path, before, after in tree_changes(repo, old, new)
    ]
