"""``CheckpointStore``: the one object the loop, the CLI and the web API use.

Every operation on a workspace holds that workspace's lock (threads and
processes alike) for its whole length, opens the shadow repository afresh and
frees it at the end. The checkpoint index lives in the store's database
(table ``checkpoints``, module ``index``); the snapshots live in the shadow
repositories (module ``take`` makes one). This module holds the operations as
the callers see them: take, list, diff, rewind, roll back, prune and delete.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2
from peewee import SqliteDatabase

from server.core.paths import Paths
from server.core.settings import CheckpointSettings
from server.engine.checkpoints import index
from server.engine.checkpoints import manifest as manifests
from server.engine.checkpoints.capture import Limits, capture, normalize
from server.engine.checkpoints.diff import diff_trees
from server.engine.checkpoints.index import resolve_workspace
from server.engine.checkpoints.lock import workspace_lock
from server.engine.checkpoints.manifest import Manifest
from server.engine.checkpoints.model import (
    Checkpoint,
    CheckpointError,
    FileDiff,
    RewindResult,
    RollbackResult,
)
from server.engine.checkpoints.prune import GarbageStats, beyond_limits, drop_refs, size_of
from server.engine.checkpoints.rewind import restore
from server.engine.checkpoints.shadow import Shadow, locate, touch_stamp
from server.engine.checkpoints.take import current_manifest, empty_folders, take
from server.engine.store.checkpoint_records import CheckpointRecord
from server.engine.store.migrations import apply_migrations
from server.engine.store.store import Store
from server.engine.workspace import own_folders_inside


class CheckpointStore:
    def __init__(
        self, paths: Paths, settings: CheckpointSettings, db: SqliteDatabase | Store
    ) -> None:
        database = db.db if isinstance(db, Store) else db
        apply_migrations(database)  # a no-op when the Store already did
        database.bind([CheckpointRecord])
        self._db = database
        self._root = paths.checkpoints
        self._own = paths.own_folders()
        self.settings = settings
        self._limits = Limits(settings.max_file_bytes, settings.max_total_bytes)

    # -- where things are ---------------------------------------------------

    def shadow(self, workspace: str | Path) -> Shadow:
        """The shadow repository of ``workspace`` (it may not exist yet)."""
        return locate(self._root, resolve_workspace(workspace))

    def _reserved(self, shadow: Shadow) -> dict[str, str]:
        """Sparrow's own folders inside the workspace: never captured or rewound."""
        inside = own_folders_inside(shadow.workspace, self._own)
        return {folder: what for folder, what in inside.items() if folder}

    def disk_usage(self, workspace: str | Path) -> int:
        """Bytes the shadow repository of ``workspace`` takes on disk."""
        return size_of(self.shadow(workspace).gitdir)

    @contextmanager
    def _open(self, shadow: Shadow) -> Iterator[pygit2.Repository]:
        """The shadow repository, with the workspace lock held. File system and
        libgit2 failures become a CheckpointError naming the workspace."""
        try:
            with workspace_lock(shadow.lock_path):
                repo = shadow.open()
                try:
                    yield repo
                finally:
                    repo.free()
        except (OSError, pygit2.GitError) as exc:
            raise CheckpointError(f"checkpoints of {shadow.workspace}: {exc}") from exc

    def _existing_workspace(self, workspace: str | Path) -> Path:
        path = resolve_workspace(workspace)
        if not path.is_dir():
            raise CheckpointError(f"workspace not found: {path}")
        return path

    # -- taking checkpoints -------------------------------------------------

    def create(
        self,
        workspace: Path,
        *,
        run_id: str,
        turn: int,
        tool: str,
        reason: str = "",
        changed_paths: Iterable[str] | None = None,
    ) -> Checkpoint:
        """Snapshot the workspace. ``changed_paths``: the workspace-relative (or
        absolute) paths touched since the last checkpoint, when the caller knows
        them (file tools); None means unknown (after a shell command): the
        whole workspace is stat-scanned, and only files whose stat data changed
        are read."""
        started = time.perf_counter()
        shadow = locate(self._root, self._existing_workspace(workspace))
        hint = None if changed_paths is None else builtins.list(changed_paths)
        with self._open(shadow) as repo:
            checkpoint, _ = self._checkpoint(
                repo, shadow, run_id, turn, tool, reason, hint, started
            )
        return checkpoint

    def _checkpoint(
        self,
        repo: pygit2.Repository,
        shadow: Shadow,
        run_id: str,
        turn: int,
        tool: str,
        reason: str,
        hint: builtins.list[str] | None,
        started: float,
    ) -> tuple[Checkpoint, Manifest]:
        return take(
            repo,
            shadow,
            self._limits,
            self._reserved(shadow),
            run_id=run_id,
            turn=turn,
            tool=tool,
            reason=reason,
            hint=hint,
            started=started,
        )

    # -- reading the index --------------------------------------------------

    def list(
        self, workspace: Path | None = None, run_id: str | None = None
    ) -> builtins.list[Checkpoint]:
        """Checkpoints, newest first, of one workspace and/or one run."""
        return index.listed(workspace, run_id)

    def get(self, checkpoint_id: str) -> Checkpoint | None:
        return index.get(checkpoint_id)

    @staticmethod
    def _tree_of(repo: pygit2.Repository, checkpoint: Checkpoint) -> bytes:
        commit = repo.get(checkpoint.commit)
        if not isinstance(commit, pygit2.Commit):
            raise CheckpointError(
                f"checkpoint '{checkpoint.id}' has no snapshot any more (its shadow "
                "repository was removed)"
            )
        return bytes(commit.tree_id.raw)

    # -- diff -----------------------------------------------------------------

    def diff(
        self, from_id: str, to_id: str | None = None, workspace: Path | None = None
    ) -> builtins.list[FileDiff]:
        """Per-file changes from checkpoint ``from_id`` to ``to_id``, or to the
        workspace as it is now when ``to_id`` is None."""
        first = index.require(from_id, workspace)
        second = index.require(to_id, Path(first.workspace)) if to_id is not None else None
        shadow = locate(self._root, Path(first.workspace))
        if second is None:
            self._existing_workspace(first.workspace)
        with self._open(shadow) as repo:
            old = self._tree_of(repo, first)
            if second is not None:
                new = self._tree_of(repo, second)
            else:
                old_manifest = current_manifest(repo, shadow)
                stamp = touch_stamp(shadow)
                current = capture(
                    repo, shadow, old_manifest, self._limits, stamp, None,
                    reserved=self._reserved(shadow),
                )
                manifests.save(
                    shadow.manifest_path,
                    current.manifest,
                    base=old_manifest,
                    changed=current.touched,
                )
                new = current.tree
            return diff_trees(repo, old, new)

    # -- rewind and rollback ----------------------------------------------------

    def rewind(
        self,
        workspace: Path,
        checkpoint_id: str,
        *,
        run_id: str = "rewind",
        paths: Iterable[str] | None = None,
    ) -> RewindResult:
        """Put the workspace back as checkpoint ``checkpoint_id`` had it, after
        taking a checkpoint of the present (``checkpoint_before``: rewind to it
        to undo this). ``paths`` limits the rewind to those files or folders;
        the checkpoint before it then reads only those paths."""
        started = time.perf_counter()
        root = self._existing_workspace(workspace)
        target = index.require(checkpoint_id, root)
        shadow = locate(self._root, root)
        only = None if paths is None else _normalized(root, paths)
        if only is not None and "" in only:
            only = None  # the whole workspace
        with self._open(shadow) as repo:
            tree = self._tree_of(repo, target)
            before, current = self._checkpoint(
                repo,
                shadow,
                run_id,
                0,
                "rewind",
                f"before rewinding to {checkpoint_id}",
                only,
                started,
            )
            done, updated, touched = restore(
                repo,
                root,
                current,
                tree,
                touch_stamp(shadow),
                only,
                target_skipped=[s.path for s in target.skipped],
                reserved=self._reserved(shadow),
                target_empty=empty_folders(repo, target.commit),
            )
            manifests.save(shadow.manifest_path, updated, base=current, changed=touched)
        return RewindResult(
            checkpoint_before=before,
            restored=done.restored,
            removed=done.removed,
            untouched=done.untouched,
        )

    def rollback(
        self,
        workspace: Path,
        checkpoint_id: str,
        *,
        changed_paths: Iterable[str] | None = None,
    ) -> RollbackResult:
        """Undo a failed batch: restore checkpoint ``checkpoint_id`` (taken
        before the batch) without checkpointing the half-done state first —
        unlike ``rewind``, it cannot be undone, and adds no timeline entry.
        ``changed_paths``: what the batch touched, when known."""
        root = self._existing_workspace(workspace)
        target = index.require(checkpoint_id, root)
        shadow = locate(self._root, root)
        hint = None if changed_paths is None else _normalized(root, changed_paths)
        with self._open(shadow) as repo:
            tree = self._tree_of(repo, target)
            old = current_manifest(repo, shadow)
            stamp = touch_stamp(shadow)
            scanned = capture(
                repo, shadow, old, self._limits, stamp, hint, reserved=self._reserved(shadow)
            )
            done, updated, touched = restore(
                repo,
                root,
                scanned.manifest,
                tree,
                stamp,
                target_skipped=[s.path for s in target.skipped],
                reserved=self._reserved(shadow),
                target_empty=empty_folders(repo, target.commit),
            )
            changed = scanned.touched | touched
            manifests.save(shadow.manifest_path, updated, base=old, changed=changed)
        return done

    # -- pruning ----------------------------------------------------------------

    def prune(
        self,
        workspace: Path | None = None,
        *,
        max_age_days: float | None,
        keep: int | None,
    ) -> int:
        """Delete checkpoints older than ``max_age_days`` and those beyond the
        newest ``keep`` of each workspace (None: no limit of that kind), then
        free their space. Returns how many were deleted."""
        doomed = beyond_limits(self.list(workspace), max_age_days=max_age_days, keep=keep)
        return sum(self._delete(Path(ws), ids) for ws, ids in doomed.items())

    def prune_by_settings(self, workspace: Path | None = None) -> int:
        """``prune`` with the limits of the settings (0 there means no limit)."""
        days = self.settings.keep_days or None
        count = self.settings.keep_count or None
        if days is None and count is None:
            return 0
        return self.prune(workspace, max_age_days=days, keep=count)

    def delete_for_runs(self, run_ids: Iterable[str]) -> int:
        """Delete every checkpoint of these runs (a session being deleted)."""
        wanted = builtins.list(dict.fromkeys(run_ids))
        if not wanted:
            return 0
        doomed = index.of_runs(wanted)
        return sum(self._delete(Path(ws), ids) for ws, ids in doomed.items())

    def delete_ids(self, checkpoint_ids: Iterable[str]) -> int:
        """Delete these checkpoints (those only a deleted session referred to)."""
        doomed = index.of_ids(builtins.list(dict.fromkeys(checkpoint_ids)))
        return sum(self._delete(Path(ws), ids) for ws, ids in doomed.items())

    def _delete(self, workspace: Path, ids: builtins.list[str]) -> int:
        shadow = locate(self._root, workspace)
        with workspace_lock(shadow.lock_path):
            deleted = index.delete(ids)
            if shadow.exists():
                self._drop_refs(shadow)
        return deleted

    def _drop_refs(self, shadow: Shadow) -> GarbageStats:
        """Delete the refs no index row names (those just deleted, and any a
        crash left behind), then collect the garbage. Lock held."""
        kept = index.ids_of(str(shadow.workspace))
        return drop_refs(shadow, kept, current_manifest)


def _normalized(root: Path, paths: Iterable[str]) -> builtins.list[str]:
    found = []
    for raw in paths:
        rel = normalize(str(root), raw)
        if rel is None:
            raise CheckpointError(f"'{raw}' is outside the workspace {root}")
        found.append(rel)
    return found
