"""The workspace path index behind ``@`` completion: a real tree on disk, real
.gitignore rules (libgit2), the real inotify watch keeping it fresh."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from server.engine.path_index import PathIndex, PathIndexes
from server.engine.path_search import PathSnapshot

# Guards against a hang, not a timing goal (those are in bench/).
BUILD_TIMEOUT = 60.0


def make_tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)


@pytest.fixture
def indexes(tmp_path: Path) -> Iterator[PathIndexes]:
    own = {(tmp_path / "ws" / "sparrow-state").resolve(): "Sparrow's own state folder"}
    made = PathIndexes(tmp_path / "cache", own)
    yield made
    made.close()


def built(indexes: PathIndexes, root: Path) -> PathIndex:
    index = indexes.get(root.resolve())
    assert index.wait(BUILD_TIMEOUT), "the index was not built"
    return index


def eventually(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the index did not catch up"
        time.sleep(0.05)


def test_suggestions_are_ranked_name_prefix_first_then_shorter() -> None:
    snapshot = PathSnapshot(
        [
            ("src/deep/inner/main.py", False),
            ("src/main.py", False),
            ("docs/domain.md", False),  # "mai" inside the name
            ("mail", True),
            ("m/my_archive.txt", False),  # only a subsequence of the name
            ("README.md", False),
        ]
    )
    found = [s.path for s in snapshot.search("mai", 10)]
    assert found == [
        "mail/",
        "src/main.py",
        "src/deep/inner/main.py",
        "docs/domain.md",
        "m/my_archive.txt",
    ]
    assert [s.path for s in snapshot.search("mai", 2)] == ["mail/", "src/main.py"]
    # A query with a slash matches whole paths: a substring first, then in order.
    assert [s.path for s in snapshot.search("src/m", 5)] == [
        "src/main.py",
        "src/deep/inner/main.py",
    ]
    assert snapshot.search("zzz", 5) == []
    assert snapshot.search("MAIN.PY", 1)[0].path == "src/main.py"  # case does not matter
    assert snapshot.search("mai", 10)[0].kind == "dir"


def test_regex_characters_in_a_query_are_plain_letters() -> None:
    snapshot = PathSnapshot([("a[b]c.txt", False), ("a-b^c.txt", False), ("abc.txt", False)])
    assert [s.path for s in snapshot.search("[b]", 5)] == ["a[b]c.txt"]
    assert [s.path for s in snapshot.search("a^c", 5)] == ["a-b^c.txt"]


def test_the_index_leaves_out_ignored_git_and_own_folders(
    indexes: PathIndexes, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    make_tree(
        root,
        [
            "src/main.py",
            "src/util.py",
            "build/main.py",
            "logs/today.log",
            "notes.log",
            ".git/config",
            "node_modules/pkg/main.js",
            "sparrow-state/main.db",
            "venv2/pyvenv.cfg",
            "venv2/lib/main.py",
        ],
    )
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    index = built(indexes, root)
    paths = index.paths()
    assert set(paths) == {".gitignore", "src", "src/main.py", "src/util.py", "logs"}
    assert paths["src"] is True and paths["src/main.py"] is False
    assert [s.path for s in index.search("mai")] == ["src/main.py"]
    # Nothing was written into the workspace.
    assert sorted(p.name for p in root.iterdir()) == [
        ".git",
        ".gitignore",
        "build",
        "logs",
        "node_modules",
        "notes.log",
        "sparrow-state",
        "src",
        "venv2",
    ]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_the_watch_keeps_the_index_fresh(indexes: PathIndexes, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, ["src/main.py", "old/gone.py"])
    index = built(indexes, root)
    assert index.builds == 1
    make_tree(root, ["src/added.py", "newdir/inner/deep.py", "skip.tmp"])
    (root / "src" / "main.py").unlink()
    for path in (root / "old").iterdir():
        path.unlink()
    (root / "old").rmdir()
    paths = index.paths()
    assert "src/added.py" in paths and "newdir/inner/deep.py" in paths
    assert "src/main.py" not in paths and "old" not in paths and "old/gone.py" not in paths
    assert index.builds == 1  # applied from the watch's events, not rebuilt
    # A file in a folder made after the watch saw it: still caught.
    make_tree(root, ["newdir/inner/later.py"])
    # Searches answer from a snapshot sorted again in the background after a change.
    eventually(lambda: [s.path for s in index.search("later")] == ["newdir/inner/later.py"])
    # A new rule: a rebuild, in the background, drops what it ignores.
    (root / ".gitignore").write_text("*.tmp\n")
    eventually(lambda: "skip.tmp" not in index.paths())
    assert index.builds >= 2


def test_the_registry_keeps_a_few_workspaces(indexes: PathIndexes, tmp_path: Path) -> None:
    roots = []
    for number in range(6):
        root = tmp_path / f"w{number}"
        make_tree(root, [f"file{number}.txt"])
        roots.append(root.resolve())
        built(indexes, root)
    first = indexes.get(roots[0])
    assert first.wait(BUILD_TIMEOUT)
    assert [s.path for s in first.search("file")] == ["file0.txt"]
