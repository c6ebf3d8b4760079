"""``CheckpointStore``: the one object the loop, the CLI and the web API use.

Every operation on a workspace holds that workspace's lock (threads and
processes alike) for its whole length, opens the shadow repository afresh and
frees it at the end. The checkpoint index lives in the store's database
(table ``checkpoints``); the snapshots live in the shadow repositories.
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2
from peewee import SQL, SqliteDatabase

from server.core.paths import Paths
from server.core.settings import CheckpointSettings
from server.engine.checkpoints import manifest as manifests
from server.engine.checkpoints.capture import Limits, capture, normalize
from server.engine.checkpoints.diff import changed_paths, diff_trees
from server.engine.checkpoints.lock import workspace_lock
from server.engine.checkpoints.manifest import Manifest
from server.engine.checkpoints.model import (
    Checkpoint,
    CheckpointError,
    CheckpointNotFound,
    FileDiff,
    RewindResult,
    RollbackResult,
    SkippedFile,
)
from server.engine.checkpoints.prune import GarbageStats, beyond_limits, drop_refs, size_of
from server.engine.checkpoints.rewind import restore
from server.engine.checkpoints.shadow import REF_PREFIX, Shadow, locate, touch_stamp
from server.engine.checkpoints.watch import WATCHES
from server.engine.store.checkpoint_records import CheckpointRecord
from server.engine.store.migrations import apply_migrations
from server.engine.store.store import Store, new_id
from server.engine.workspace import own_folders_inside

_SIGNATURE = ("Sparrow", "sparrow@localhost")
_EMPTY_FOLDER = "empty-folder: "


def _empty_folders(repo: pygit2.Repository, commit_id: str) -> builtins.list[str] | None:
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


def _to_checkpoint(row: CheckpointRecord) -> Checkpoint:
    return Checkpoint(
        id=row.id,
        workspace=row.workspace,
        run_id=row.run_id,
        turn=row.turn,
        tool=row.tool,
        created_at=row.created_at,
        commit=row.commit_id,
        files_changed=json.loads(row.files_changed),
        bytes_stored=row.bytes_stored,
        duration_ms=row.duration_ms,
        skipped=[SkippedFile(path, reason) for path, reason in json.loads(row.skipped)],
        reason=row.reason,
        baseline=bool(row.baseline),
    )


def resolve_workspace(workspace: str | Path) -> Path:
    return Path(workspace).expanduser().resolve()


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

    def _manifest(self, repo: pygit2.Repository, shadow: Shadow) -> Manifest:
        loaded = manifests.load(shadow.manifest_path)
        if loaded.tree is not None and pygit2.Oid(raw=loaded.tree) not in repo:
            return Manifest()  # the repository was reset under it: read everything
        return loaded

    def _latest_tree(self, repo: pygit2.Repository, old: Manifest, workspace: str) -> bytes | None:
        """The tree of the newest checkpoint of the workspace that still exists."""
        if old.head is not None and REF_PREFIX + old.head[0] in repo.references:
            return old.head[1]
        row = (
            CheckpointRecord.select()
            .where(CheckpointRecord.workspace == workspace)
            .order_by(CheckpointRecord.created_at.desc(), SQL("rowid DESC"))
            .first()
        )
        if row is None:
            return None
        commit = repo.get(row.commit_id)
        return bytes(commit.tree_id.raw) if isinstance(commit, pygit2.Commit) else None

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
        workspace = str(shadow.workspace)
        old = self._manifest(repo, shadow)
        if hint is None:
            # What the kernel saw change since the last checkpoint; None: scan it all.
            hint = WATCHES.hint(workspace, shadow.manifest_path, old.dirs if old.tree else ())
        stamp = touch_stamp(shadow)
        try:
            watch_folder = WATCHES.before_listing(workspace)
            result = capture(
                repo, shadow, old, self._limits, stamp, hint, watch_folder, self._reserved(shadow)
            )
            latest = self._latest_tree(repo, old, workspace)
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
        WATCHES.captured(
            workspace, shadow.manifest_path, result.manifest.dirs, linked=result.linked
        )
        skipped = [SkippedFile(p, r) for p, r in sorted(result.manifest.skipped.items())]
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
            skipped=skipped,
            reason=reason,
            baseline=baseline,
        )
        CheckpointRecord.create(
            id=checkpoint.id,
            workspace=workspace,
            run_id=run_id,
            turn=turn,
            tool=tool,
            reason=reason,
            created_at=created,
            commit_id=checkpoint.commit,
            files_changed=json.dumps(files),
            bytes_stored=checkpoint.bytes_stored,
            duration_ms=checkpoint.duration_ms,
            skipped=json.dumps([[s.path, s.reason] for s in skipped]),
            baseline=baseline,
        )
        return checkpoint, result.manifest

    # -- reading the index --------------------------------------------------

    def list(
        self, workspace: Path | None = None, run_id: str | None = None
    ) -> builtins.list[Checkpoint]:
        """Checkpoints, newest first, of one workspace and/or one run."""
        query = CheckpointRecord.select()
        if workspace is not None:
            query = query.where(CheckpointRecord.workspace == str(resolve_workspace(workspace)))
        if run_id is not None:
            query = query.where(CheckpointRecord.run_id == run_id)
        query = query.order_by(CheckpointRecord.created_at.desc(), SQL("rowid DESC"))
        return [_to_checkpoint(row) for row in query]

    def get(self, checkpoint_id: str) -> Checkpoint | None:
        row = CheckpointRecord.get_or_none(CheckpointRecord.id == checkpoint_id)
        return _to_checkpoint(row) if row is not None else None

    def _require(self, checkpoint_id: str, workspace: Path | None = None) -> Checkpoint:
        found = self.get(checkpoint_id)
        if found is None:
            raise CheckpointNotFound(f"no checkpoint '{checkpoint_id}' (see `sparrow checkpoints`)")
        if workspace is not None and found.workspace != str(resolve_workspace(workspace)):
            raise CheckpointError(
                f"checkpoint '{checkpoint_id}' belongs to {found.workspace}, not {workspace}"
            )
        return found

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
        first = self._require(from_id, workspace)
        second = self._require(to_id, Path(first.workspace)) if to_id is not None else None
        shadow = locate(self._root, Path(first.workspace))
        if second is None:
            self._existing_workspace(first.workspace)
        with self._open(shadow) as repo:
            old = self._tree_of(repo, first)
            if second is not None:
                new = self._tree_of(repo, second)
            else:
                old_manifest = self._manifest(repo, shadow)
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
        target = self._require(checkpoint_id, root)
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
                target_empty=_empty_folders(repo, target.commit),
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
        target = self._require(checkpoint_id, root)
        shadow = locate(self._root, root)
        hint = None if changed_paths is None else _normalized(root, changed_paths)
        with self._open(shadow) as repo:
            tree = self._tree_of(repo, target)
            old = self._manifest(repo, shadow)
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
                target_empty=_empty_folders(repo, target.commit),
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
        doomed: dict[str, builtins.list[str]] = {}
        query = CheckpointRecord.select(CheckpointRecord.id, CheckpointRecord.workspace).where(
            CheckpointRecord.run_id.in_(wanted)
        )
        for row in query:
            doomed.setdefault(row.workspace, []).append(row.id)
        return sum(self._delete(Path(ws), ids) for ws, ids in doomed.items())

    def delete_ids(self, checkpoint_ids: Iterable[str]) -> int:
        """Delete these checkpoints (those only a deleted session referred to)."""
        wanted = builtins.list(dict.fromkeys(checkpoint_ids))
        doomed: dict[str, builtins.list[str]] = {}
        query = CheckpointRecord.select(CheckpointRecord.id, CheckpointRecord.workspace).where(
            CheckpointRecord.id.in_(wanted)
        )
        for row in query:
            doomed.setdefault(row.workspace, []).append(row.id)
        return sum(self._delete(Path(ws), ids) for ws, ids in doomed.items())

    def _delete(self, workspace: Path, ids: builtins.list[str]) -> int:
        shadow = locate(self._root, workspace)
        with workspace_lock(shadow.lock_path):
            deleted = CheckpointRecord.delete().where(CheckpointRecord.id.in_(ids)).execute()
            if shadow.exists():
                self._drop_refs(shadow)
        return int(deleted)

    def _drop_refs(self, shadow: Shadow) -> GarbageStats:
        """Delete the refs no index row names (those just deleted, and any a
        crash left behind), then collect the garbage. Lock held."""
        workspace = str(shadow.workspace)
        kept = {
            row.id
            for row in CheckpointRecord.select(CheckpointRecord.id).where(
                CheckpointRecord.workspace == workspace
            )
        }
        return drop_refs(shadow, kept, self._manifest)

def _normalized(root: Path, paths: Iterable[str]) -> builtins.list[str]:
    found = []
    for raw in paths:
        rel = normalize(str(root), raw)
        if rel is None:
            raise CheckpointError(f"'{raw}' is outside the workspace {root}")
        found.append(rel)
    return found
