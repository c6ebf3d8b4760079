"""The checkpoint index: the store's ``checkpoints`` table, one row per
checkpoint, read back as ``Checkpoint`` objects and written as each is taken
or deleted. The snapshots themselves live in the shadow repositories."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from peewee import SQL

from server.engine.checkpoints.model import (
    Checkpoint,
    CheckpointError,
    CheckpointNotFound,
    SkippedFile,
)
from server.engine.store.checkpoint_records import CheckpointRecord


def resolve_workspace(workspace: str | Path) -> Path:
    return Path(workspace).expanduser().resolve()


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


def record(checkpoint: Checkpoint) -> None:
    CheckpointRecord.create(
        id=checkpoint.id,
        workspace=checkpoint.workspace,
        run_id=checkpoint.run_id,
        turn=checkpoint.turn,
        tool=checkpoint.tool,
        reason=checkpoint.reason,
        created_at=checkpoint.created_at,
        commit_id=checkpoint.commit,
        files_changed=json.dumps(checkpoint.files_changed),
        bytes_stored=checkpoint.bytes_stored,
        duration_ms=checkpoint.duration_ms,
        skipped=json.dumps([[s.path, s.reason] for s in checkpoint.skipped]),
        baseline=checkpoint.baseline,
    )


def listed(workspace: Path | None = None, run_id: str | None = None) -> list[Checkpoint]:
    """Checkpoints, newest first, of one workspace and/or one run."""
    query = CheckpointRecord.select()
    if workspace is not None:
        query = query.where(CheckpointRecord.workspace == str(resolve_workspace(workspace)))
    if run_id is not None:
        query = query.where(CheckpointRecord.run_id == run_id)
    query = query.order_by(CheckpointRecord.created_at.desc(), SQL("rowid DESC"))
    return [_to_checkpoint(row) for row in query]


def get(checkpoint_id: str) -> Checkpoint | None:
    row = CheckpointRecord.get_or_none(CheckpointRecord.id == checkpoint_id)
    return _to_checkpoint(row) if row is not None else None


def require(checkpoint_id: str, workspace: Path | None = None) -> Checkpoint:
    """The checkpoint, which must exist (and belong to ``workspace`` when given)."""
    found = get(checkpoint_id)
    if found is None:
        raise CheckpointNotFound(f"no checkpoint '{checkpoint_id}' (see `sparrow checkpoints`)")
    if workspace is not None and found.workspace != str(resolve_workspace(workspace)):
        raise CheckpointError(
            f"checkpoint '{checkpoint_id}' belongs to {found.workspace}, not {workspace}"
        )
    return found


def newest_commit(workspace: str) -> str | None:
    """The commit of the workspace's newest checkpoint; None when it has none."""
    row = (
        CheckpointRecord.select()
        .where(CheckpointRecord.workspace == workspace)
        .order_by(CheckpointRecord.created_at.desc(), SQL("rowid DESC"))
        .first()
    )
    return None if row is None else str(row.commit_id)


def of_runs(run_ids: list[str]) -> dict[str, list[str]]:
    """The ids of the checkpoints of these runs, per workspace."""
    return _per_workspace(CheckpointRecord.select(CheckpointRecord.id, CheckpointRecord.workspace)
                          .where(CheckpointRecord.run_id.in_(run_ids)))


def of_ids(checkpoint_ids: list[str]) -> dict[str, list[str]]:
    """These checkpoints' ids, per workspace (those the index knows)."""
    return _per_workspace(CheckpointRecord.select(CheckpointRecord.id, CheckpointRecord.workspace)
                          .where(CheckpointRecord.id.in_(checkpoint_ids)))


def _per_workspace(query: Iterable[CheckpointRecord]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for row in query:
        found.setdefault(row.workspace, []).append(row.id)
    return found


def delete(ids: list[str]) -> int:
    return int(CheckpointRecord.delete().where(CheckpointRecord.id.in_(ids)).execute())


def ids_of(workspace: str) -> set[str]:
    """The ids of every checkpoint of ``workspace`` the index still holds."""
    return {
        row.id
        for row in CheckpointRecord.select(CheckpointRecord.id).where(
            CheckpointRecord.workspace == workspace
        )
    }
