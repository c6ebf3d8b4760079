"""Checkpoints told by the kernel what changed (inotify) hold exactly what a
full scan would: random edits, moves and new folders between checkpoints,
every checkpoint's tree compared with the files on disk. And the watch steps
aside when it cannot vouch: hard links, a lost event queue, a moved folder,
a manifest written by someone else."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.core.paths import Paths
from server.engine.checkpoints import Checkpoint, CheckpointError, CheckpointStore
from server.engine.checkpoints.watch import WATCHES, file_system_of
from tests.conftest import require
from tests.engine.checkpoints.helpers import State, files_of, make_store

WATCHABLE = file_system_of(tempfile.gettempdir()) is not None and os.name == "posix"

PATHS = ["a.txt", "b", "d1/c", "d1/d2/e", "d1/d2/f", "g/h/i.sh", "g/j", "new/deep/k"]
DIRS = ["d1", "d1/d2", "g", "g/h", "new", "new/deep", "m"]
contents = st.binary(max_size=24)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(PATHS), contents),
        st.tuples(st.just("append"), st.sampled_from(PATHS), contents),
        st.tuples(st.just("delete"), st.sampled_from(PATHS)),
        st.tuples(st.just("rmtree"), st.sampled_from(DIRS)),
        st.tuples(st.just("move"), st.sampled_from(PATHS + DIRS), st.sampled_from(PATHS + DIRS)),
        st.tuples(st.just("chmod"), st.sampled_from(PATHS), st.booleans()),
        st.tuples(st.just("symlink"), st.sampled_from(PATHS), st.sampled_from(PATHS)),
        st.tuples(st.just("checkpoint")),
    ),
    max_size=40,
)


def tree_files(store: CheckpointStore, workspace: Path, checkpoint: Checkpoint) -> State:
    """What a checkpoint holds, read straight from its git tree."""
    repo = pygit2.Repository(str(store.shadow(workspace).gitdir))
    found: State = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            path = f"{prefix}{entry.name}"
            obj = repo[entry.id]
            if isinstance(obj, pygit2.Tree):
                walk(obj, path + "/")
            elif entry.filemode == pygit2.enums.FileMode.LINK:
                found[path] = ("link", obj.read_raw(), False)
            else:
                executable = entry.filemode == pygit2.enums.FileMode.BLOB_EXECUTABLE
                found[path] = ("file", obj.read_raw(), executable)

    commit = repo[checkpoint.commit]
    assert isinstance(commit, pygit2.Commit)
    walk(commit.tree, "")
    repo.free()
    return found


def apply(root: Path, op: tuple[object, ...]) -> None:
    kind = op[0]
    target = root / str(op[1]) if len(op) > 1 else root
    try:
        if kind in ("write", "append"):
            target.parent.mkdir(parents=True, exist_ok=True)
            assert isinstance(op[2], bytes)
            with target.open("ab" if kind == "append" else "wb") as handle:
                handle.write(op[2])
        elif kind == "delete":
            target.unlink()
        elif kind == "rmtree":
            shutil.rmtree(target)
        elif kind == "move":
            destination = root / str(op[2])
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.rename(target, destination)
        elif kind == "chmod":
            mode = target.stat().st_mode
            target.chmod(mode | stat.S_IXUSR if op[2] else mode & ~stat.S_IXUSR)
        elif kind == "symlink":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(str(op[2]))
    except OSError:
        pass  # not possible in this state (a folder where a file is, and so on)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sequence=ops)
def test_watched_checkpoints_hold_exactly_the_files_on_disk(
    sequence: list[tuple[object, ...]], paths: Paths
) -> None:
    require("a local file system with inotify (Linux)", WATCHABLE)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        (workspace / "a.txt").write_text("start")
        store, checkpoints = make_store(paths)
        try:
            served = WATCHES.served
            # The first checkpoints arm the watch; checkpoints after them use it.
            for step in [("checkpoint",), ("checkpoint",), *sequence, ("checkpoint",)]:
                if step[0] != "checkpoint":
                    apply(workspace, step)
                    continue
                made = checkpoints.create(workspace, run_id="r", turn=0, tool="t")
                assert tree_files(checkpoints, workspace, made) == files_of(workspace)
            assert WATCHES.served > served, "the watch was never used"
        finally:
            WATCHES.forget(str(workspace.resolve()))
            store.close()


def _checkpoint_twice(checkpoints: CheckpointStore, workspace: Path) -> None:
    for _ in range(2):  # arm the watch, then let it vouch for the folders
        checkpoints.create(workspace, run_id="r", turn=0, tool="t")


def test_a_full_event_queue_falls_back_to_a_full_scan(paths: Paths, workspace: Path) -> None:
    require("a local file system with inotify (Linux)", WATCHABLE)
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    store, checkpoints = make_store(paths)
    try:
        (workspace / "many").mkdir()
        _checkpoint_twice(checkpoints, workspace)
        served = WATCHES.served
        for n in range(limit + 10):  # distinct names: the kernel merges repeats
            (workspace / "many" / f"f{n}").write_bytes(b"")
        (workspace / "late.txt").write_text("after the overflow")
        made = checkpoints.create(workspace, run_id="r", turn=0, tool="t")
        assert WATCHES.served == served  # not by the watch
        assert tree_files(checkpoints, workspace, made) == files_of(workspace)
    finally:
        WATCHES.forget(str(workspace))
        store.close()


def test_hard_links_turn_the_watch_off(paths: Paths, workspace: Path, tmp_path: Path) -> None:
    require("a local file system with inotify (Linux)", WATCHABLE)
    outside = tmp_path / "outside.txt"
    outside.write_text("v1")
    os.link(outside, workspace / "linked.txt")
    store, checkpoints = make_store(paths)
    try:
        _checkpoint_twice(checkpoints, workspace)
        served = WATCHES.served
        outside.write_text("v2, written through the other link")
        made = checkpoints.create(workspace, run_id="r", turn=0, tool="t")
        assert WATCHES.served == served
        assert (
            tree_files(checkpoints, workspace, made)["linked.txt"][1]
            == b"v2, written through the other link"
        )
    finally:
        WATCHES.forget(str(workspace))
        store.close()


def test_another_process_s_checkpoint_means_a_full_scan(paths: Paths, workspace: Path) -> None:
    require("a local file system with inotify (Linux)", WATCHABLE)
    store, checkpoints = make_store(paths)
    try:
        _checkpoint_twice(checkpoints, workspace)
        served = WATCHES.served
        # As another process would: its manifest, not the one this process wrote.
        manifest = checkpoints.shadow(workspace).manifest_path
        manifest.write_bytes(manifest.read_bytes())
        (workspace / "new.txt").write_text("x")
        made = checkpoints.create(workspace, run_id="r", turn=0, tool="t")
        assert WATCHES.served == served
        assert tree_files(checkpoints, workspace, made) == files_of(workspace)
        again = checkpoints.create(workspace, run_id="r", turn=0, tool="t")
        assert WATCHES.served == served + 1 and again.files_changed == []
    finally:
        WATCHES.forget(str(workspace))
        store.close()


@pytest.mark.parametrize("move", ["folder", "workspace-child"])
def test_a_moved_folder_is_scanned_again(paths: Paths, workspace: Path, move: str) -> None:
    require("a local file system with inotify (Linux)", WATCHABLE)
    (workspace / "d" / "e").mkdir(parents=True)
    (workspace / "d" / "e" / "f.txt").write_text("f")
    store, checkpoints = make_store(paths)
    try:
        _checkpoint_twice(checkpoints, workspace)
        if move == "folder":
            os.rename(workspace / "d" / "e", workspace / "moved")
        else:
            os.rename(workspace / "d", workspace / "d2")
        (workspace / ("moved" if move == "folder" else "d2/e") / "f.txt").write_text("changed")
        made = checkpoints.create(workspace, run_id="r", turn=0, tool="t")
        assert tree_files(checkpoints, workspace, made) == files_of(workspace)
    finally:
        WATCHES.forget(str(workspace))
        store.close()


def test_a_checkpoint_that_fails_after_the_drain_does_not_lose_the_changes(
    paths: Paths, workspace: Path
) -> None:
    require("a local file system with inotify (Linux)", WATCHABLE)
    (workspace / "a.txt").write_text("one")
    store, checkpoints = make_store(paths)
    try:
        _checkpoint_twice(checkpoints, workspace)
        # Its references cannot be written: the checkpoint fails after the watch
        # was drained and the workspace captured.
        refs = checkpoints.shadow(workspace).gitdir / "refs" / "sparrow"
        kept = refs.with_name("sparrow-kept")
        refs.rename(kept)
        refs.write_text("not a folder")
        (workspace / "a.txt").write_text("two")
        with pytest.raises(CheckpointError):
            checkpoints.create(workspace, run_id="r", turn=0, tool="t")
        refs.unlink()
        kept.rename(refs)
        made = checkpoints.create(workspace, run_id="r", turn=0, tool="t")
        assert tree_files(checkpoints, workspace, made)["a.txt"][1] == b"two"
    finally:
        WATCHES.forget(str(workspace))
        store.close()


def test_the_second_checkpoint_looks_only_at_what_changed(
    paths: Paths, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first checkpoint's scan watches each folder before it lists it, so
    the second is told only the changed file: not every folder again (which,
    at 100,000 files in 5,000 folders, cost a minute and a half)."""
    require("a local file system with inotify (Linux)", WATCHABLE)
    for n in range(40):
        folder = workspace / f"top{n % 4}" / f"mid{n % 8}" / f"leaf{n}"
        folder.mkdir(parents=True)
        (folder / "file.c").write_text(f"int x = {n};\n")
    told: list[list[str] | None] = []
    hint = WATCHES.hint

    def recorded(*args: object) -> list[str] | None:
        answer = hint(*args)  # type: ignore[arg-type]
        told.append(answer)
        return answer

    monkeypatch.setattr(WATCHES, "hint", recorded)
    store, checkpoints = make_store(paths)
    try:
        checkpoints.create(workspace, run_id="r", turn=0, tool="t")
        (workspace / "top1" / "mid1" / "leaf9" / "file.c").write_text("int x = -9;\n")
        made = checkpoints.create(workspace, run_id="r", turn=1, tool="t")
        assert told == [None, ["top1/mid1/leaf9/file.c"]]
        assert made.files_changed == ["top1/mid1/leaf9/file.c"]
        assert tree_files(checkpoints, workspace, made) == files_of(workspace)
    finally:
        WATCHES.forget(str(workspace))
        store.close()
