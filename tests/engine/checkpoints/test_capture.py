import os
from collections.abc import Iterable
from pathlib import Path

import pygit2
import pytest

from server.core.paths import Paths
from server.engine.checkpoints import manifest
from server.engine.checkpoints.capture import CaptureResult, Limits, capture, normalize
from server.engine.checkpoints.diff import tree_changes
from server.engine.checkpoints.lock import workspace_lock
from server.engine.checkpoints.shadow import Shadow, locate, touch_stamp


class Capturer:
    """Captures of one workspace, each building on the last (as the store does)."""

    def __init__(self, paths: Paths, workspace: Path, limits: Limits) -> None:
        self.shadow: Shadow = locate(paths.checkpoints, workspace.resolve())
        self.limits = limits
        self.last = manifest.Manifest()

    def __call__(self, hint: Iterable[str] | None = None) -> CaptureResult:
        with workspace_lock(self.shadow.lock_path):
            repo = self.shadow.open()
            try:
                stamp = touch_stamp(self.shadow)
                result = capture(repo, self.shadow, self.last, self.limits, stamp, hint)
            finally:
                repo.free()
        self.last = result.manifest
        return result

    def files(self) -> list[str]:
        return sorted(self.last.entries)

    def tree_files(self, result: CaptureResult) -> list[str]:
        repo = self.shadow.open()
        try:
            return [path for path, _, _ in tree_changes(repo, None, result.tree)]
        finally:
            repo.free()


@pytest.fixture
def snap(paths: Paths, workspace: Path) -> Capturer:
    return Capturer(paths, workspace, Limits(max_file_bytes=1000, max_total_bytes=10_000))


def write(root: Path, rel: str, data: str | bytes = "x") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def test_gitignore_rules_are_honoured_and_re_read_when_they_change(
    snap: Capturer, workspace: Path
) -> None:
    write(workspace, ".gitignore", "build/\n*.log\n!keep.log\n")
    write(workspace, "src/main.py")
    write(workspace, "build/out.js")
    write(workspace, "debug.log")
    write(workspace, "keep.log")
    write(workspace, "src/sub/.gitignore", "secret.txt\n")
    write(workspace, "src/sub/secret.txt")
    write(workspace, "src/sub/fine.txt")
    result = snap()
    expected = [".gitignore", "keep.log", "src/main.py", "src/sub/.gitignore", "src/sub/fine.txt"]
    assert snap.files() == expected == snap.tree_files(result)
    assert result.manifest.skipped == {}  # ignored files are not listed as skipped

    write(workspace, ".gitignore", "*.py\n")  # a tracked file becomes ignored, others not
    result = snap(["src/sub/fine.txt"])  # a hint that misses .gitignore: noticed anyway
    assert snap.files() == [
        ".gitignore",
        "build/out.js",
        "debug.log",
        "keep.log",
        "src/sub/.gitignore",
        "src/sub/fine.txt",
    ]
    assert result.full_scan and result.files_read == 3  # only the newly captured ones


def test_the_users_info_exclude_counts(snap: Capturer, workspace: Path) -> None:
    write(workspace, ".git/info/exclude", "local-only.txt\n")
    write(workspace, ".git/HEAD", "ref: refs/heads/main\n")
    write(workspace, "local-only.txt")
    write(workspace, "shared.txt")
    snap()
    assert snap.files() == ["shared.txt"]
    write(workspace, ".git/info/exclude", "shared.txt\n")
    snap(["local-only.txt"])
    assert snap.files() == ["local-only.txt"]


def test_built_in_excludes_are_left_out_and_listed(snap: Capturer, workspace: Path) -> None:
    write(workspace, "app.py")
    write(workspace, "nested/.git/HEAD", "ref: refs/heads/main\n")
    write(workspace, "nested/code.py")
    write(workspace, "submodule/.git", "gitdir: ../.git/modules/submodule\n")
    write(workspace, "submodule/lib.py")
    write(workspace, "node_modules/pkg/index.js")
    write(workspace, "web/node_modules/pkg/index.js")
    write(workspace, ".venv/bin/python", "")
    write(workspace, "env3/pyvenv.cfg", "home = /usr\n")
    write(workspace, "env3/lib/site.py")
    write(workspace, "pkg/__pycache__/m.cpython-311.pyc")
    write(workspace, ".mypy_cache/x.json")
    write(workspace, ".sparrow/handoff/2025.md")
    write(workspace, ".sparrow/config.toml")
    result = snap()
    assert snap.files() == [".sparrow/config.toml", "app.py"]
    assert result.manifest.skipped == {
        "nested/": "nested git repository",
        "submodule/": "nested git repository",
        "node_modules/": "dependency folder (node_modules)",
        "web/node_modules/": "dependency folder (node_modules)",
        ".venv/": "virtual environment",
        "env3/": "virtual environment",
    }
    assert (workspace / "nested" / ".git" / "HEAD").is_file()  # never renamed or moved
    # A hint inside an excluded part is ignored too.
    write(workspace, "nested/new.py")
    write(workspace, "node_modules/pkg/new.js")
    hinted = snap(["nested/new.py", "node_modules/pkg/new.js", "pkg/__pycache__/m.pyc"])
    assert (
        not hinted.full_scan
        and hinted.files_read == 0
        and snap.files()
        == [
            ".sparrow/config.toml",
            "app.py",
        ]
    )


def test_size_cap_and_workspace_budget(snap: Capturer, workspace: Path) -> None:
    write(workspace, "big.bin", b"\x00" * 1001)
    write(workspace, "ok.bin", b"\x00" * 1000)
    for n in range(12):
        write(workspace, f"f{n:02d}.txt", "y" * 900)
    result = snap()
    skipped = result.manifest.skipped
    assert skipped["big.bin"] == "larger than the per-file cap (1000 B)"
    # 10,000 bytes of budget: files in path order until it is spent.
    assert snap.files() == [f"f{n:02d}.txt" for n in range(11)]
    assert skipped["f11.txt"].startswith("over the workspace budget")
    assert skipped["ok.bin"].startswith("over the workspace budget")
    assert result.manifest.total == 11 * 900
    # What is kept stays kept: freeing room lets the next new files in, in order.
    (workspace / "f00.txt").unlink()
    result = snap()
    assert "f11.txt" in snap.files() and "ok.bin" in result.manifest.skipped


def test_only_changed_files_are_read_with_or_without_a_hint(
    snap: Capturer, workspace: Path
) -> None:
    for n in range(50):
        write(workspace, f"d{n % 5}/f{n}.txt", f"content {n}\n")
    first = snap()
    assert (first.files_read, first.blobs_written) == (50, 50)
    again = snap()
    assert (again.files_read, again.blobs_written, again.tree) == (0, 0, first.tree)

    write(workspace, "d3/f8.txt", "changed\n")
    scanned = snap()
    assert (scanned.files_read, scanned.blobs_written, scanned.full_scan) == (1, 1, True)
    write(workspace, "d3/f8.txt", "changed again\n")
    hinted = snap(["d3/f8.txt"])
    assert (hinted.files_read, hinted.blobs_written, hinted.full_scan) == (1, 1, False)
    write(workspace, "d3/f8.txt", "content 8\n")  # back to a content stored before
    back = snap(["d3/f8.txt"])
    assert (back.files_read, back.blobs_written, back.bytes_stored, back.tree) == (
        1,
        0,
        0,
        first.tree,
    )


def test_racily_clean_entries_are_read_again(snap: Capturer, workspace: Path) -> None:
    write(workspace, "a.txt", "one")
    assert snap().files_read == 1 and snap.last.entries["a.txt"][0][1] == 3
    # A file modified after the scan started (here: an mtime at or after the
    # stamp) may change again in the same clock tick with the same stat data.
    future = os.stat(workspace / "a.txt").st_mtime_ns + 10**10
    os.utime(workspace / "a.txt", ns=(future, future))
    assert snap().files_read == 1
    assert snap.last.entries["a.txt"][0][1] == -1  # smudged: never matches
    assert snap().files_read == 1  # so it is read again
    os.utime(workspace / "a.txt", ns=(future - 10**11, future - 10**11))
    assert snap().files_read == 1 and snap().files_read == 0  # settled


def test_hints_follow_deletions_new_folders_and_type_changes(
    snap: Capturer, workspace: Path
) -> None:
    write(workspace, "keep.txt")
    write(workspace, "dir/a.txt")
    write(workspace, "dir/sub/b.txt")
    write(workspace, "file-then-dir", "f")
    snap()
    (workspace / "dir" / "sub" / "b.txt").unlink()
    (workspace / "dir" / "sub").rmdir()
    (workspace / "dir" / "a.txt").unlink()
    (workspace / "dir").rmdir()
    (workspace / "file-then-dir").unlink()
    write(workspace, "file-then-dir/inner.txt", "i")
    write(workspace, "brand/new/deep.txt", "d")
    snap(["dir", "file-then-dir/inner.txt", str(workspace / "brand")])
    assert snap.files() == ["brand/new/deep.txt", "file-then-dir/inner.txt", "keep.txt"]
    # A hint and a full scan agree on the result.
    hinted_tree = snap.last.tree
    snap.last = manifest.Manifest()
    assert snap().tree == hinted_tree


def test_symlinks_are_captured_as_links_and_special_files_are_skipped(
    snap: Capturer, workspace: Path
) -> None:
    write(workspace, "real/file.txt", "r")
    (workspace / "to-file").symlink_to("real/file.txt")
    (workspace / "to-dir").symlink_to("real")
    (workspace / "dangling").symlink_to("nowhere")
    os.mkfifo(workspace / "pipe")
    result = snap()
    assert snap.files() == ["dangling", "real/file.txt", "to-dir", "to-file"]
    assert snap.last.entries["to-dir"][2] == 0o120000
    assert result.manifest.skipped == {"pipe": "not a regular file"}
    repo = pygit2.Repository(str(snap.shadow.gitdir))
    blob = repo[pygit2.Oid(raw=snap.last.entries["to-dir"][1])]
    assert isinstance(blob, pygit2.Blob) and blob.data == b"real"


def test_names_that_are_not_utf8_are_skipped(snap: Capturer, workspace: Path) -> None:
    bad = os.fsdecode(b"caf\xe9.txt")
    (workspace / bad).write_text("latin-1 name")
    write(workspace, "good.txt")
    result = snap()
    assert snap.files() == ["good.txt"]
    assert result.manifest.skipped == {bad: "name is not valid UTF-8"}


def test_hint_paths_are_normalised() -> None:
    assert normalize("/w", "a/./b//c") == "a/b/c"
    assert normalize("/w", "/w/x/y") == "x/y"
    assert normalize("/w", "/w") == ""
    assert normalize("/w", "../x") is None
    assert normalize("/w", "/elsewhere/x") is None
