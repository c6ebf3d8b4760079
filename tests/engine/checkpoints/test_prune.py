import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from server.core.paths import Paths
from server.engine.checkpoints import CheckpointStore
from server.engine.checkpoints.objects import PACK_MIN_OBJECTS
from server.engine.store.checkpoint_records import CheckpointRecord
from tests.conftest import require_program
from tests.engine.checkpoints.helpers import files_of, git, make_store


@pytest.fixture
def cps(paths: Paths) -> Iterator[CheckpointStore]:
    store, checkpoints = make_store(paths, keep_days=0, keep_count=2)
    yield checkpoints
    store.close()


def _objects(cps: CheckpointStore, workspace: Path) -> pygit2.Repository:
    return pygit2.Repository(str(cps.shadow(workspace).gitdir))


def _fsck(cps: CheckpointStore, workspace: Path) -> None:
    require_program("git")
    git(cps.shadow(workspace).gitdir, "fsck", "--strict", "--no-dangling")


def test_prune_by_count_frees_what_only_the_pruned_checkpoints_held(
    cps: CheckpointStore, workspace: Path
) -> None:
    made = []
    for n in range(4):
        (workspace / "a.txt").write_text(f"version {n}\n" * 50)
        made.append(cps.create(workspace, run_id="r", turn=n, tool="t"))
    blob_of = [pygit2.hash(f"version {n}\n".encode() * 50) for n in range(4)]
    assert all(blob in _objects(cps, workspace) for blob in blob_of)
    before = cps.disk_usage(workspace)

    assert cps.prune(workspace, max_age_days=None, keep=2) == 2
    assert [c.id for c in cps.list(workspace)] == [made[3].id, made[2].id]
    repo = _objects(cps, workspace)
    assert [blob in repo for blob in blob_of] == [False, False, True, True]
    assert sorted(ref.removeprefix("refs/sparrow/") for ref in repo.references) == sorted(
        [made[2].id, made[3].id]
    )
    assert cps.disk_usage(workspace) < before
    _fsck(cps, workspace)
    cps.rewind(workspace, made[2].id)  # what is kept still works
    assert (workspace / "a.txt").read_text() == "version 2\n" * 50


def test_prune_by_age_and_by_settings(cps: CheckpointStore, workspace: Path) -> None:
    made = [cps.create(workspace, run_id="r", turn=n, tool="t") for n in range(4)]
    old = time.time() - 10 * 86_400
    CheckpointRecord.update(created_at=old).where(CheckpointRecord.id == made[0].id).execute()
    assert cps.prune(max_age_days=5, keep=None) == 1
    assert len(cps.list(workspace)) == 3
    assert cps.prune_by_settings() == 1  # keep_count = 2, keep_days = 0 (no age limit)
    assert [c.id for c in cps.list()] == [made[3].id, made[2].id]


def test_deleting_a_sessions_runs_deletes_their_checkpoints(
    cps: CheckpointStore, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (workspace / "f.txt").write_text("1")
    cps.create(workspace, run_id="gone", turn=1, tool="t")
    kept = cps.create(workspace, run_id="kept", turn=1, tool="t")
    cps.create(other, run_id="gone", turn=1, tool="t")
    assert cps.delete_for_runs(["gone", "never-existed"]) == 2
    assert [c.id for c in cps.list()] == [kept.id]
    assert cps.delete_for_runs([]) == 0
    assert list(_objects(cps, other).references) == []


def test_pruning_everything_keeps_the_base_of_the_next_checkpoint(
    cps: CheckpointStore, workspace: Path
) -> None:
    for n in range(PACK_MIN_OBJECTS + 10):
        (workspace / f"f{n}.txt").write_text(f"file {n}")
    first = cps.create(workspace, run_id="r", turn=1, tool="t")
    assert first.bytes_stored > 0 and list(cps.shadow(workspace).pack_dir.glob("*.pack"))
    assert cps.prune(workspace, max_age_days=None, keep=0) == 1
    (workspace / "f1.txt").write_text("changed")
    second = cps.create(workspace, run_id="r", turn=2, tool="t")
    assert second.bytes_stored == len("changed")  # only the changed file was stored
    _fsck(cps, workspace)
    state = files_of(workspace)
    (workspace / "f2.txt").unlink()
    cps.rewind(workspace, second.id)
    assert files_of(workspace) == state


def test_a_pack_holding_pruned_objects_is_rewritten(cps: CheckpointStore, workspace: Path) -> None:
    for n in range(PACK_MIN_OBJECTS + 10):
        (workspace / f"f{n}.txt").write_text(f"first {n}\n" * 20)
    cps.create(workspace, run_id="r", turn=1, tool="t")
    for n in range(PACK_MIN_OBJECTS + 10):
        (workspace / f"f{n}.txt").write_text(f"second {n}\n" * 20)
    last = cps.create(workspace, run_id="r", turn=2, tool="t")
    packs = sorted(cps.shadow(workspace).pack_dir.glob("*.pack"))
    assert len(packs) == 2
    before = cps.disk_usage(workspace)
    assert cps.prune(workspace, max_age_days=None, keep=1) == 1
    after = sorted(cps.shadow(workspace).pack_dir.glob("*.pack"))
    assert packs[0] not in after or packs[1] not in after
    assert pygit2.hash(b"first 1\n" * 20) not in _objects(cps, workspace)
    assert cps.disk_usage(workspace) < before
    _fsck(cps, workspace)
    assert cps.diff(last.id, workspace=workspace) == []


def test_checkpoints_of_a_deleted_workspace_can_still_be_pruned(
    cps: CheckpointStore, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    cps.create(workspace, run_id="r", turn=1, tool="t")
    cps.create(workspace, run_id="r", turn=2, tool="t")
    (workspace / "a.txt").unlink()
    workspace.rmdir()
    assert cps.prune(workspace, max_age_days=None, keep=1) == 1
    assert cps.shadow(workspace).exists()
    assert cps.delete_for_runs(["r"]) == 1
    assert cps.list() == [] and not cps.shadow(workspace).exists()  # nothing left of it
