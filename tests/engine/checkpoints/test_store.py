import json
import os
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from server.core.paths import Paths
from server.engine.checkpoints import CheckpointError, CheckpointNotFound, CheckpointStore
from server.engine.store import Store
from tests.conftest import require_program
from tests.engine.checkpoints.helpers import files_of, git, hash_folder, make_store


@pytest.fixture
def stores(paths: Paths) -> Iterator[tuple[Store, CheckpointStore]]:
    store, checkpoints = make_store(paths)
    yield store, checkpoints
    store.close()


@pytest.fixture
def cps(stores: tuple[Store, CheckpointStore]) -> CheckpointStore:
    return stores[1]


def test_a_plain_folder_gets_a_shadow_repository_and_no_git_folder(
    cps: CheckpointStore, workspace: Path, paths: Paths
) -> None:
    (workspace / "a.txt").write_text("one\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "b.py").write_text("print(2)\n")
    first = cps.create(workspace, run_id="r1", turn=1, tool="write_file", reason="before edit")
    assert not (workspace / ".git").exists()
    assert sorted(os.listdir(workspace)) == ["a.txt", "src"]
    shadow = cps.shadow(workspace)
    assert shadow.gitdir.parent == paths.checkpoints and shadow.gitdir.name.endswith(".git")
    repo = pygit2.Repository(str(shadow.gitdir))
    assert repo.is_bare and repo.references[f"refs/sparrow/{first.id}"].target == pygit2.Oid(
        hex=first.commit
    )
    assert first.files_changed == ["a.txt", "src/b.py"]
    assert (first.run_id, first.turn, first.tool, first.reason) == (
        "r1",
        1,
        "write_file",
        "before edit",
    )
    assert first.workspace == str(workspace.resolve()) and first.bytes_stored == 13
    assert json.loads(json.dumps(first.to_dict()))["files_changed"] == ["a.txt", "src/b.py"]
    assert cps.get(first.id) == first


def test_files_changed_lists_what_changed_since_the_previous_checkpoint(
    cps: CheckpointStore, workspace: Path
) -> None:
    (workspace / "keep.txt").write_text("k")
    (workspace / "edit.txt").write_text("e")
    (workspace / "gone.txt").write_text("g")
    cps.create(workspace, run_id="r", turn=1, tool="t")
    (workspace / "edit.txt").write_text("e2")
    (workspace / "gone.txt").unlink()
    (workspace / "new.txt").write_text("n")
    second = cps.create(workspace, run_id="r", turn=2, tool="t")
    assert second.files_changed == ["edit.txt", "gone.txt", "new.txt"]
    assert second.bytes_stored == 3  # "e2" and "n"; nothing else written again
    third = cps.create(workspace, run_id="r", turn=3, tool="t")
    assert third.files_changed == [] and third.bytes_stored == 0 and third.commit != second.commit


def test_list_is_newest_first_and_filters_by_workspace_and_run(
    cps: CheckpointStore, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    made = [
        cps.create(workspace, run_id="r1", turn=1, tool="t"),
        cps.create(other, run_id="r2", turn=1, tool="t"),
        cps.create(workspace, run_id="r2", turn=2, tool="t"),
    ]
    assert [c.id for c in cps.list()] == [c.id for c in reversed(made)]
    assert [c.id for c in cps.list(workspace)] == [made[2].id, made[0].id]
    assert [c.id for c in cps.list(run_id="r2")] == [made[2].id, made[1].id]
    assert [c.id for c in cps.list(workspace, run_id="r1")] == [made[0].id]
    assert cps.get("cp-nope") is None
    with pytest.raises(CheckpointNotFound, match="sparrow checkpoints"):
        cps.diff("cp-nope")
    with pytest.raises(CheckpointError, match="belongs to"):
        cps.rewind(other, made[0].id)
    with pytest.raises(CheckpointError, match="workspace not found"):
        cps.create(tmp_path / "missing", run_id="r", turn=1, tool="t")


def test_rewind_restores_contents_deletions_modes_and_binaries_and_can_be_undone(
    cps: CheckpointStore, workspace: Path
) -> None:
    (workspace / "text.txt").write_text("original\n")
    (workspace / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (workspace / "tool.sh").chmod(0o755)
    (workspace / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (workspace / "deep" / "er").mkdir(parents=True)
    (workspace / "deep" / "er" / "file.txt").write_text("deep\n")
    (workspace / "link").symlink_to("text.txt")
    before = files_of(workspace)
    target = cps.create(workspace, run_id="r", turn=1, tool="t")

    (workspace / "text.txt").write_text("changed\n")
    (workspace / "tool.sh").chmod(0o644)
    (workspace / "blob.bin").write_bytes(b"\x00other")
    (workspace / "deep" / "er" / "file.txt").unlink()
    (workspace / "created.txt").write_text("new\n")
    (workspace / "newdir" / "sub").mkdir(parents=True)
    (workspace / "newdir" / "sub" / "x.txt").write_text("x")
    (workspace / "link").unlink()
    (workspace / "link").symlink_to("blob.bin")
    after = files_of(workspace)

    result = cps.rewind(workspace, target.id)
    assert files_of(workspace) == before
    assert not (workspace / "newdir").exists()  # folders emptied by the rewind go too
    assert result.removed == ["created.txt", "newdir/sub/x.txt"]
    assert sorted(result.restored) == [
        "blob.bin",
        "deep/er/file.txt",
        "link",
        "text.txt",
        "tool.sh",
    ]
    assert result.untouched == []
    assert result.checkpoint_before.tool == "rewind" and result.checkpoint_before.run_id == "rewind"
    assert cps.list(workspace)[0] == result.checkpoint_before

    cps.rewind(workspace, result.checkpoint_before.id)  # undo the rewind
    assert files_of(workspace) == after


def test_rewind_of_some_paths_leaves_the_others(cps: CheckpointStore, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a1")
    (workspace / "b.txt").write_text("b1")
    target = cps.create(workspace, run_id="r", turn=1, tool="t")
    (workspace / "a.txt").write_text("a2")
    (workspace / "b.txt").write_text("b2")
    result = cps.rewind(workspace, target.id, paths=["a.txt"])
    assert (workspace / "a.txt").read_text() == "a1" and (workspace / "b.txt").read_text() == "b2"
    assert result.restored == ["a.txt"] and result.checkpoint_before.files_changed == ["a.txt"]
    cps.rewind(workspace, result.checkpoint_before.id, paths=[str(workspace / "a.txt")])
    assert (workspace / "a.txt").read_text() == "a2"
    with pytest.raises(CheckpointError, match="outside the workspace"):
        cps.rewind(workspace, target.id, paths=["../elsewhere"])


def test_rollback_restores_without_a_new_checkpoint(cps: CheckpointStore, workspace: Path) -> None:
    (workspace / "a.txt").write_text("before batch")
    batch = cps.create(workspace, run_id="r", turn=1, tool="write_file")
    (workspace / "a.txt").write_text("half done")
    (workspace / "b.txt").write_text("half created")
    result = cps.rollback(workspace, batch.id, changed_paths=["a.txt", "b.txt"])
    assert files_of(workspace) == {"a.txt": ("file", b"before batch", False)}
    assert (result.restored, result.removed) == (["a.txt"], ["b.txt"])
    assert [c.id for c in cps.list(workspace)] == [batch.id]
    (workspace / "c.txt").write_text("after a shell command")
    cps.rollback(workspace, batch.id)  # no hint: a stat scan finds it
    assert sorted(os.listdir(workspace)) == ["a.txt"]


def test_diff_between_checkpoints_and_to_the_workspace(
    cps: CheckpointStore, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    (workspace / "b.bin").write_bytes(b"\x00\x01")
    (workspace / "run.sh").write_text("echo\n")
    (workspace / "gone.txt").write_text("bye\n")
    first = cps.create(workspace, run_id="r", turn=1, tool="t")
    (workspace / "a.txt").write_text("one\nthree\n")
    (workspace / "b.bin").write_bytes(b"\x00\x02\x03")
    (workspace / "run.sh").chmod(0o755)
    (workspace / "gone.txt").unlink()
    (workspace / "new.txt").write_text("hello\n")
    second = cps.create(workspace, run_id="r", turn=2, tool="t")
    diffs = {d.path: d for d in cps.diff(first.id, second.id)}
    assert {p: d.status for p, d in diffs.items()} == {
        "a.txt": "modified",
        "b.bin": "modified",
        "gone.txt": "deleted",
        "new.txt": "added",
        "run.sh": "mode",
    }
    assert "-two\n+three\n" in diffs["a.txt"].patch and not diffs["a.txt"].binary
    assert diffs["b.bin"].binary and diffs["b.bin"].patch == ""
    assert (diffs["b.bin"].old_size, diffs["b.bin"].new_size) == (2, 3)
    assert (diffs["gone.txt"].old_size, diffs["gone.txt"].new_size) == (4, 0)
    assert "new mode 100755" in diffs["run.sh"].patch
    (workspace / "new.txt").write_text("hello again\n")
    live = cps.diff(second.id, workspace=workspace)
    assert [(d.path, d.status) for d in live] == [("new.txt", "modified")]
    assert cps.diff(second.id, second.id) == []
    assert [c.id for c in cps.list(workspace)] == [second.id, first.id]  # a diff adds none


def test_the_users_git_is_never_written(cps: CheckpointStore, workspace: Path) -> None:
    require_program("git")
    git(workspace, "init", "-q", "-b", "main")
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "a.txt").write_text("committed\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "one")
    git(workspace, "branch", "feature")
    (workspace / "a.txt").write_text("stashed change\n")
    git(workspace, "stash", "-q")
    (workspace / "a.txt").write_text("work in progress\n")
    (workspace / "debug.log").write_text("ignored\n")
    git(workspace, "add", "a.txt")  # a staged change, in the user's index
    status = git(workspace, "status", "--porcelain", "--branch")
    dot_git = hash_folder(workspace / ".git")

    first = cps.create(workspace, run_id="r", turn=1, tool="t")
    assert first.files_changed == [".gitignore", "a.txt"]
    (workspace / "a.txt").write_text("agent edit\n")
    (workspace / "b.txt").write_text("agent file\n")
    cps.create(workspace, run_id="r", turn=2, tool="t")
    cps.diff(first.id, workspace=workspace)
    cps.rewind(workspace, first.id)
    cps.prune(workspace, max_age_days=None, keep=1)

    assert hash_folder(workspace / ".git") == dot_git
    assert git(workspace, "status", "--porcelain", "--branch") == status
    assert (workspace / "debug.log").read_text() == "ignored\n"
    assert git(workspace, "stash", "list").count("stash@") == 1
