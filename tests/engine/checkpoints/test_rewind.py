from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from server.core.paths import Paths
from server.engine.checkpoints import CheckpointStore
from server.engine.checkpoints import manifest as manifests
from server.engine.checkpoints.rewind import restore, safe_path
from server.engine.checkpoints.shadow import touch_stamp
from tests.engine.checkpoints.helpers import files_of, hash_folder, make_store


@pytest.fixture
def cps(paths: Paths) -> Iterator[CheckpointStore]:
    store, checkpoints = make_store(paths, max_file_bytes=100)
    yield checkpoints
    store.close()


def test_ignored_and_skipped_files_are_never_touched(cps: CheckpointStore, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("tracked\n")
    (workspace / "big.bin").write_bytes(b"small at first")
    (workspace / "out").mkdir()
    (workspace / "out" / "cache.txt").write_text("old cache")
    target = cps.create(workspace, run_id="r", turn=1, tool="t")
    assert "out/cache.txt" in target.files_changed

    (workspace / ".gitignore").write_text("out/\n*.tmp\n")
    (workspace / "out" / "cache.txt").write_text("new cache, ignored now")
    (workspace / "scratch.tmp").write_text("ignored, created since")
    (workspace / "big.bin").write_bytes(b"\x00" * 101)  # over the cap now: skipped
    (workspace / "huge-new.bin").write_bytes(b"\x00" * 500)
    result = cps.rewind(workspace, target.id)

    assert (workspace / "out" / "cache.txt").read_text() == "new cache, ignored now"
    assert (workspace / "scratch.tmp").read_text() == "ignored, created since"
    assert (workspace / "big.bin").read_bytes() == b"\x00" * 101
    assert (workspace / "huge-new.bin").exists()
    assert result.removed == [".gitignore"]
    assert sorted(result.untouched) == ["big.bin", "out/cache.txt"]
    skipped = {s.path: s.reason for s in result.checkpoint_before.skipped}
    assert set(skipped) == {"big.bin", "huge-new.bin"}


def test_nested_repositories_are_left_alone(cps: CheckpointStore, workspace: Path) -> None:
    nested = workspace / "vendor" / "lib"
    (nested / ".git").mkdir(parents=True)
    (nested / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (nested / "code.py").write_text("v1")
    (workspace / "app.py").write_text("v1")
    target = cps.create(workspace, run_id="r", turn=1, tool="t")
    before = hash_folder(nested)
    (nested / "code.py").write_text("v2")
    (nested / "new.py").write_text("new")
    (workspace / "app.py").write_text("v2")
    after = hash_folder(nested)
    assert after != before
    result = cps.rewind(workspace, target.id)
    assert (workspace / "app.py").read_text() == "v1"
    assert hash_folder(nested) == after and result.restored == ["app.py"]


def test_nothing_is_written_through_a_symlinked_folder(
    cps: CheckpointStore, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "dir").mkdir()
    (workspace / "dir" / "f.txt").write_text("inside")
    target = cps.create(workspace, run_id="r", turn=1, tool="t")
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "dir" / "f.txt").unlink()
    (workspace / "dir").rmdir()
    (workspace / "dir").symlink_to(outside)  # ignored from now on, so untracked
    (workspace / ".gitignore").write_text("dir\n")
    result = cps.rewind(workspace, target.id)
    assert list(outside.iterdir()) == []
    assert result.untouched == ["dir/f.txt"] and (workspace / "dir").is_symlink()


def test_a_tree_naming_git_internals_is_refused(
    cps: CheckpointStore, workspace: Path, paths: Paths
) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / "a.txt").write_text("a")
    cps.create(workspace, run_id="r", turn=1, tool="t")
    shadow = cps.shadow(workspace)
    repo = shadow.open()
    current = manifests.load(shadow.manifest_path)
    # libgit2 refuses to build such trees; a raw object write does not check.
    tree_type = pygit2.enums.ObjectType.TREE
    blob = repo.create_blob(b"evil").raw
    a_txt = current.entries["a.txt"][1]
    inner = repo.odb.write(tree_type, b"100644 HEAD\0" + blob).raw
    config = repo.odb.write(tree_type, b"100644 config\0" + blob).raw
    sub = repo.odb.write(tree_type, b"40000 .GIT\0" + config).raw
    evil = bytes(
        repo.odb.write(
            tree_type, b"40000 .git\0" + inner + b"100644 a.txt\0" + a_txt + b"40000 sub\0" + sub
        ).raw
    )
    dot_git = hash_folder(workspace / ".git")
    result, _, _ = restore(repo, workspace, current, evil, touch_stamp(shadow))
    repo.free()
    assert sorted(result.untouched) == [".git/HEAD", "sub/.GIT/config"]
    assert hash_folder(workspace / ".git") == dot_git and not (workspace / "sub").exists()
    assert not safe_path("../x") and not safe_path("a//b") and safe_path("a/.gitignore")


def test_a_modified_file_keeps_its_other_permission_bits(
    cps: CheckpointStore, workspace: Path
) -> None:
    script = workspace / "run.sh"
    script.write_text("v1")
    script.chmod(0o750)
    target = cps.create(workspace, run_id="r", turn=1, tool="t")
    script.write_text("v2")
    script.chmod(0o640)
    cps.rewind(workspace, target.id)
    assert script.read_text() == "v1" and script.stat().st_mode & 0o777 == 0o750


def test_rewinding_restores_a_folder_where_a_file_now_is(
    cps: CheckpointStore, workspace: Path
) -> None:
    (workspace / "thing").mkdir()
    (workspace / "thing" / "a.txt").write_text("a")
    as_folder = files_of(workspace)
    target = cps.create(workspace, run_id="r", turn=1, tool="t")
    (workspace / "thing" / "a.txt").unlink()
    (workspace / "thing").rmdir()
    (workspace / "thing").write_text("now a file")
    as_file = files_of(workspace)
    undo = cps.rewind(workspace, target.id)
    assert files_of(workspace) == as_folder
    cps.rewind(workspace, undo.checkpoint_before.id)
    assert files_of(workspace) == as_file


def test_the_manifest_after_a_rewind_matches_the_checkpoint(
    cps: CheckpointStore, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    target = cps.create(workspace, run_id="r", turn=1, tool="t")
    (workspace / "a.txt").write_text("b")
    (workspace / "b.txt").write_text("b")
    cps.rewind(workspace, target.id)
    repo = pygit2.Repository(str(cps.shadow(workspace).gitdir))
    tree = manifests.load(cps.shadow(workspace).manifest_path).tree
    commit = repo.get(target.commit)
    assert isinstance(commit, pygit2.Commit) and tree == commit.tree_id.raw
    after = cps.create(workspace, run_id="r", turn=2, tool="t")
    assert after.files_changed == ["a.txt", "b.txt"]  # since the checkpoint before the rewind
    assert after.bytes_stored == 0  # nothing re-read into new blobs
