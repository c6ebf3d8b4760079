"""Taking one checkpoint: capture the workspace against its manifest, commit
the tree as a parentless commit whose message names the run, the turn and the
empty folders (git keeps none), keep it alive with its ref, save the manifest
and add the index row. Also reads those empty folders back for a rewind."""

from __future__ import annotations

import json
import time

import pygit2

from server.engine.checkpoints import index
from server.engine.checkpoints import manifest as manifests
from server.engine.checkpoints.capture import Limits, capture
from server.engine.checkpoints.diff import changed_paths
from server.engine.checkpoints.manifest import Manifest
from server.engine.checkpoints.model import Checkpoint, SkippedFile
from server.engine.checkpoints.shadow import REF_PREFIX, Shadow, touch_stamp
from server.engine.checkpoints.watch import WATCHES
from server.engine.store.store import new_id

_SIGNATURE = ("Sparrow", "sparrow@localhost")
_EMPTY_FOLDER = "empty-folder: "


def current_manifest(repo: pygit2.Repository, shadow: Shadow) -> Manifest:
    """The shadow's manifest, or an empty one when the repository was reset under it."""
    loaded = manifests.load(shadow.manifest_path)
    if loaded.tree is not None and pygit2.Oid(raw=loaded.tree) not in repo:
        return Manifest()  # the repository was reset under it: read everything
    return loaded


def _latest_tree(repo: pygit2.Repository, old: Manifest, workspace: str) -> bytes | None:
    """The tree of the newest checkpoint of the workspace that still exists."""
    if old.head is not None and REF_PREFIX + old.head[0] in repo.references:
        return old.head[1]
    commit_id = index.newest_commit(workspace)
    if commit_id is None:
        return None
    commit = repo.get(commit_id)
    return bytes(commit.tree_id.raw) if isinstance(commit, pygit2.Commit) else None


def take(
    repo: pygit2.Repository,
    shadow: Shadow,
    limits: Limits,
    reserved: dict[str, str],
    *,
    run_id: str,
    turn: int,
    tool: str,
    reason: str,
    hint: list[str] | None,
    started: float,
) -> tuple[Checkpoint, Manifest]:
    """A checkpoint of the workspace of ``shadow`` (its repository ``repo`` open,
    the lock held), and the manifest it left. ``hint``: the paths changed since
    the last one, None when unknown."""
    workspace = str(shadow.workspace)
    old = current_manifest(repo, shadow)
    if hint is None:
        # What the kernel saw change since the last checkpoint; None: scan it all.
        hint = WATCHES.hint(workspace, shadow.manifest_path, old.dirs if old.tree else ())
    stamp = touch_stamp(shadow)
    try:
        watch_folder = WATCHES.before_listing(workspace)
        result = capture(repo, shadow, old, limits, stamp, hint, watch_folder, reserved)
        latest = _latest_tree(repo, old, workspace)
        # No checkpoint before it: it is the baseline, not a change of every file.
        baseline = latest is None
        files = changed_paths(repo, latest, result.tree)
        created = time.time()
        signature = pygit2.Signature(*_SIGNATURE, int(created), 0)
        message = f"{tool}: {reason}\n\nrun {run_id}, turn {turn}\nworkspace {workspace}\n"
        # Git keeps no empty folders: the checkpoint names them, for a rewind.
        empty = sorted(result.manifest.empty or ())
        message += "".join(f"{_EMPTY_FOLDER}{json.dumps(folder)}\n" for folder in empty)
        commit = repo.create_commit(
            None, signature, signature, message, pygit2.Oid(raw=result.tree), []
        )
        checkpoint_id = new_id("cp")
        while REF_PREFIX + checkpoint_id in repo.references:  # same second, same random part
            checkpoint_id = new_id("cp")
        repo.references.create(REF_PREFIX + checkpoint_id, commit)
        result.manifest.head = (checkpoint_id, result.tree)
        manifests.save(shadow.manifest_path, result.manifest, base=old, changed=result.touched)
    except BaseException:
        # The drained events are recorded nowhere yet: scan it all next time.
        WATCHES.forget(workspace)
        raise
    WATCHES.captured(workspace, shadow.manifest_path, result.manifest.dirs, linked=result.linked)
    checkpoint = Checkpoint(
        id=checkpoint_id,
        workspace=workspace,
        run_id=run_id,
        turn=turn,
        tool=tool,
        created_at=created,
        commit=str(commit),
        files_changed=files,
        bytes_stored=result.bytes_stored,
        duration_ms=round((time.perf_counter() - started) * 1000),
        skipped=[SkippedFile(p, r) for p, r in sorted(result.manifest.skipped.items())],
        reason=reason,
        baseline=baseline,
    )
    index.record(checkpoint)
    return checkpoint, result.manifest


def empty_folders(repo: pygit2.Repository, commit_id: str) -> list[str] | None:
    """The empty folders a checkpoint recorded; None when it predates the record."""
    commit = repo.get(commit_id)
    if not isinstance(commit, pygit2.Commit):
        return None
    message = commit.message
    if "\nworkspace " not in message:
        return None
    folders = []
    for line in message.splitlines():
        if line.startswith(_EMPTY_FOLDER):
            try:
                folder = json.loads(line[len(_EMPTY_FOLDER):])
            except ValueError:
                continue
            if isinstance(folder, str):
                folders.append(folder)
    return folders
