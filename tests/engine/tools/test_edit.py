import os
from pathlib import Path

import pytest

from server.core.settings import FileSettings, Settings
from server.engine.tools.base import Risk, ToolContext
from server.engine.tools.edit import DeleteFile, EditFile
from server.engine.workspace import OutsideWorkspace, open_workspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    settings = Settings(files=FileSettings(read_limit_bytes=100, list_limit_entries=3))
    return ToolContext(open_workspace(workspace), settings)


def test_risk_levels() -> None:
    assert (EditFile.risk, DeleteFile.risk) == (Risk.MUTATING, Risk.DESTRUCTIVE)


async def edit(ctx: ToolContext, path: str, old: str, new: str) -> tuple[bool, str]:
    out = await EditFile().run({"path": path, "old": old, "new": new}, ctx)
    return out.ok, out.content


async def test_edit_replaces_the_one_occurrence(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.py").write_text("def f():\n    return 1\n")
    ok, message = await edit(ctx, "a.py", "return 1", "return 2")
    assert ok and "at line 2" in message
    assert (workspace / "a.py").read_text() == "def f():\n    return 2\n"
    # Removing a passage: `new` may be empty.
    ok, _ = await edit(ctx, "a.py", "    return 2\n", "")
    assert ok and (workspace / "a.py").read_text() == "def f():\n"


async def test_edit_refuses_missing_repeated_and_empty_old(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("x = 1\nx = 1\n")
    ok, message = await edit(ctx, "a.txt", "y = 2", "z")
    assert not ok and "not found" in message
    ok, message = await edit(ctx, "a.txt", "x = 1", "x = 2")
    assert not ok and "found 2 times" in message and "give more surrounding text" in message
    (workspace / "b.txt").write_text("aaa")
    ok, message = await edit(ctx, "b.txt", "aa", "b")
    assert not ok and "found 2 times" in message
    ok, message = await edit(ctx, "a.txt", "", "z")
    assert not ok and "empty" in message
    assert (workspace / "a.txt").read_text() == "x = 1\nx = 1\n"


async def test_edit_keeps_crlf_and_hints_at_it(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    ok, message = await edit(ctx, "w.txt", "one\ntwo", "x")
    assert not ok and "CRLF" in message
    ok, _ = await edit(ctx, "w.txt", "two", "2")
    assert ok and (workspace / "w.txt").read_bytes() == b"one\r\n2\r\n"


async def test_edit_refuses_binary_big_missing_and_folders(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "blob.bin").write_bytes(b"abc\x00def")
    ok, message = await edit(ctx, "blob.bin", "abc", "x")
    assert not ok and "binary" in message
    (workspace / "big.txt").write_text("a" * 101)
    ok, message = await edit(ctx, "big.txt", "a", "b")
    assert not ok and "too large" in message
    (workspace / "latin.txt").write_bytes("café".encode("latin-1"))
    ok, message = await edit(ctx, "latin.txt", "caf", "x")
    assert not ok and "not UTF-8" in message
    ok, message = await edit(ctx, "nope.txt", "a", "b")
    assert not ok and "no such file" in message
    (workspace / "d").mkdir()
    ok, message = await edit(ctx, "d", "a", "b")
    assert not ok and "folder" in message
    assert (workspace / "blob.bin").read_bytes() == b"abc\x00def"


async def test_edit_keeps_the_mode_and_leaves_no_temp_file(
    ctx: ToolContext, workspace: Path
) -> None:
    script = workspace / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)
    ok, _ = await edit(ctx, "run.sh", "old", "new")
    assert ok and script.read_text() == "echo new\n"
    assert os.stat(script).st_mode & 0o777 == 0o750
    assert sorted(p.name for p in workspace.iterdir()) == ["run.sh"]


async def test_edit_through_a_symlink_changes_the_target_and_keeps_the_link(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "real.txt").write_text("hello\n")
    (workspace / "link.txt").symlink_to("real.txt")
    ok, _ = await edit(ctx, "link.txt", "hello", "bye")
    assert ok and (workspace / "real.txt").read_text() == "bye\n"
    assert (workspace / "link.txt").is_symlink()


async def test_edit_refuses_a_symlink_out_of_the_workspace(
    ctx: ToolContext, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (workspace / "out.txt").symlink_to(outside)
    with pytest.raises(OutsideWorkspace):
        await edit(ctx, "out.txt", "secret", "x")
    assert outside.read_text() == "secret\n"


async def test_delete_removes_one_file(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.txt").write_text("abc")
    out = await DeleteFile().run({"path": "sub/a.txt"}, ctx)
    assert out.ok and "deleted" in out.content
    assert not (workspace / "sub" / "a.txt").exists() and (workspace / "sub").is_dir()


async def test_delete_refuses_folders_and_missing_files(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "keep").write_text("x")
    folder = await DeleteFile().run({"path": "d"}, ctx)
    assert not folder.ok and "is a folder" in folder.content
    assert (workspace / "d" / "keep").exists()
    missing = await DeleteFile().run({"path": "nope.txt"}, ctx)
    assert not missing.ok and "no such file" in missing.content
    under_a_file = await DeleteFile().run({"path": "d/keep/x"}, ctx)
    assert not under_a_file.ok and "no such file" in under_a_file.content
    for path in (".", "", "d/.."):
        assert not (await DeleteFile().run({"path": path}, ctx)).ok
    assert (workspace / "d").is_dir()


async def test_delete_of_a_symlink_removes_the_link_not_its_target(
    ctx: ToolContext, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    (workspace / "out.txt").symlink_to(outside)
    outside_dir = tmp_path / "outside-dir"
    outside_dir.mkdir()
    (workspace / "dirlink").symlink_to(outside_dir)
    (workspace / "dangling").symlink_to(tmp_path / "gone")
    for name in ("out.txt", "dirlink", "dangling"):
        out = await DeleteFile().run({"path": name}, ctx)
        assert out.ok and "symlink removed" in out.content, name
    assert list(workspace.iterdir()) == []
    assert outside.read_text() == "keep me" and outside_dir.is_dir()


async def test_delete_refuses_a_parent_outside_the_workspace(
    ctx: ToolContext, workspace: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("x")
    (workspace / "up").symlink_to(tmp_path)
    for path in ("../victim.txt", "up/victim.txt", str(victim)):
        with pytest.raises(OutsideWorkspace):
            await DeleteFile().run({"path": path}, ctx)
    assert victim.exists()
