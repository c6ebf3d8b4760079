"""Two things a checkpoint must get right that git alone does not: empty
folders come back on a rewind, and Sparrow's own folders (its state, config,
data and cache, and any shadow repository) are never captured nor rewound,
even when the workspace holds them (the home folder as a workspace)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from server.core.paths import Paths
from server.engine.checkpoints import Checkpoint, CheckpointStore
from server.engine.checkpoints.watch import WATCHES
from tests.engine.checkpoints.helpers import hash_folder, make_store


def _tree_paths(cps: CheckpointStore, workspace: Path, made: Checkpoint) -> set[str]:
    repo = pygit2.Repository(str(cps.shadow(workspace).gitdir))
    found: set[str] = set()

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            obj = repo[entry.id]
            if isinstance(obj, pygit2.Tree):
                walk(obj, f"{prefix}{entry.name}/")
            else:
                found.add(f"{prefix}{entry.name}")

    commit = repo[made.commit]
    assert isinstance(commit, pygit2.Commit)
    walk(commit.tree, "")
    repo.free()
    return found


@pytest.fixture
def cps(paths: Paths) -> Iterator[CheckpointStore]:
    store, checkpoints = make_store(paths)
    yield checkpoints
    store.close()


@pytest.mark.parametrize("watched", [False, True], ids=["stat-scan", "file-watch"])
def test_a_rewind_brings_back_empty_folders_and_removes_new_ones(
    cps: CheckpointStore, workspace: Path, watched: bool
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "main.c").write_text("int main;\n")
    (workspace / "logs").mkdir()
    (workspace / "a" / "b" / "c").mkdir(parents=True)
    try:
        first = cps.create(workspace, run_id="r", turn=0, tool="start")
        if not watched:
            WATCHES.forget(str(workspace))
        # The run: removes the empty folders, makes a new one and a file.
        (workspace / "logs").rmdir()
        for folder in ("a/b/c", "a/b", "a"):
            (workspace / folder).rmdir()
        (workspace / "build" / "out").mkdir(parents=True)
        (workspace / "src" / "new.c").write_text("int x;\n")
        cps.create(workspace, run_id="r", turn=1, tool="run_shell")
        if not watched:
            WATCHES.forget(str(workspace))

        done = cps.rewind(workspace, first.id)

        assert (workspace / "logs").is_dir() and not any((workspace / "logs").iterdir())
        assert (workspace / "a" / "b" / "c").is_dir()
        assert not (workspace / "build").exists()
        assert not (workspace / "src" / "new.c").exists()
        assert {"logs/", "a/b/c/"} <= set(done.restored)
        # And back again: the rewind is undone by rewinding to the checkpoint before it.
        cps.rewind(workspace, done.checkpoint_before.id)
        assert (workspace / "build" / "out").is_dir() and not (workspace / "logs").exists()
    finally:
        WATCHES.forget(str(workspace))


def test_sparrow_s_own_folders_in_the_workspace_are_never_captured_nor_rewound(
    tmp_path: Path,
) -> None:
    """The home folder as the workspace, with Sparrow's folders where
    platformdirs puts them by default."""
    home = tmp_path / "home"
    own = Paths(
        config=home / ".config" / "sparrow",
        state=home / ".local" / "state" / "sparrow",
        data=home / ".local" / "share" / "sparrow",
        cache=home / ".cache" / "sparrow",
    ).ensure()
    (home / "notes.txt").write_text("mine\n")
    (home / ".config" / "other-app").mkdir()
    (home / ".config" / "other-app" / "settings.ini").write_text("x=1\n")
    (own.config / "config.toml").write_text("[shell]\ntimeout_seconds = 30\n")
    (own.cache / "blob").write_bytes(b"\0" * 64)
    # Another Sparrow's shadow repository, under a portable SPARROW_HOME.
    stray = home / "portable" / "state" / "checkpoints" / "abc.git"
    pygit2.init_repository(str(stray), bare=True).free()
    (stray / "sparrow").mkdir()
    (stray / "sparrow" / "workspace").write_text("/elsewhere\n")
    store, cps = make_store(own)
    try:
        first = cps.create(home, run_id="r", turn=0, tool="start")
        second = cps.create(home, run_id="r", turn=1, tool="run_shell")
        for made in (first, second):
            held = _tree_paths(cps, home, made)
            assert "notes.txt" in held and ".config/other-app/settings.ini" in held
            leaked = [p for p in held if p.startswith((".local/state/sparrow", ".config/sparrow",
                                                       ".cache/sparrow", ".local/share/sparrow",
                                                       "portable/state/checkpoints"))]
            assert leaked == []
        skipped = {s.path: s.reason for s in first.skipped}
        assert skipped[".local/state/sparrow/"] == "Sparrow's own state folder"
        assert skipped[".config/sparrow/"] == "Sparrow's own config folder"
        assert skipped["portable/state/checkpoints/abc.git/"] == "Sparrow's shadow repository"

        before = {f: hash_folder(f) for f in (own.state / "transcripts", own.config)}
        rows = sqlite3.connect(own.database).execute("select count(*) from checkpoints").fetchone()
        (home / "notes.txt").write_text("changed\n")
        cps.rewind(home, first.id)
        assert (home / "notes.txt").read_text() == "mine\n"
        assert {f: hash_folder(f) for f in before} == before
        after = sqlite3.connect(own.database).execute("select count(*) from checkpoints").fetchone()
        assert after[0] == rows[0] + 1  # the checkpoint before the rewind, nothing rolled back
    finally:
        WATCHES.forget(str(home))
        store.close()


def test_a_checkpoint_that_holds_sparrow_s_files_is_rewound_around_them(tmp_path: Path) -> None:
    """A checkpoint taken before Sparrow's folders were left out holds them:
    a rewind to it leaves them as they are."""
    home = tmp_path / "home"
    own = Paths(home / "cfg", home / "state", home / "data", home / "cache").ensure()
    elsewhere = Paths(tmp_path / "c", tmp_path / "s", tmp_path / "d", tmp_path / "k").ensure()
    (own.state / "keep.txt").write_text("v1\n")
    store, cps = make_store(elsewhere)  # a store that does not know these folders as its own
    try:
        old = cps.create(home, run_id="r", turn=0, tool="start")
        assert "state/keep.txt" in _tree_paths(cps, home, old)
    finally:
        store.close()
    (own.state / "keep.txt").write_text("v2\n")
    # The same store, now knowing home/state as one of its own folders.
    knowing = Paths(own.state, elsewhere.state, elsewhere.data, elsewhere.cache)
    store, cps = make_store(knowing)
    try:
        done = cps.rewind(home, old.id)
        assert (own.state / "keep.txt").read_text() == "v2\n"
        assert not [p for p in done.restored + done.removed if p.startswith("state/")]
    finally:
        WATCHES.forget(str(home))
        store.close()


def test_the_first_checkpoint_is_the_baseline_not_a_change(
    cps: CheckpointStore, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    (workspace / "b.txt").write_text("b")
    first = cps.create(workspace, run_id="r", turn=0, tool="start")
    (workspace / "a.txt").write_text("changed")
    second = cps.create(workspace, run_id="r", turn=1, tool="write_file")
    assert first.baseline and not second.baseline
    assert second.files_changed == ["a.txt"]
    assert [c.baseline for c in cps.list(workspace)] == [False, True]  # newest first
