import os
from pathlib import Path

import pytest

from server.core.settings import FileSettings, Settings
from server.engine.tools.base import Risk, ToolArgumentError, ToolContext, check_args
from server.engine.tools.files import ListDir, ReadFile, WriteFile
from server.engine.workspace import OutsideWorkspace, open_workspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    settings = Settings(files=FileSettings(read_limit_bytes=100, list_limit_entries=3))
    return ToolContext(open_workspace(workspace), settings)


def test_risk_levels() -> None:
    assert (ReadFile.risk, ListDir.risk, WriteFile.risk) == (
        Risk.READ_ONLY,
        Risk.READ_ONLY,
        Risk.MUTATING,
    )


async def test_write_then_read(ctx: ToolContext, workspace: Path) -> None:
    out = await WriteFile().run({"path": "sub/a.txt", "content": "héllo\n"}, ctx)
    assert out.ok and "created" in out.content
    assert (workspace / "sub" / "a.txt").read_text() == "héllo\n"
    read = await ReadFile().run({"path": "sub/a.txt"}, ctx)
    assert read.ok and read.content == "héllo\n"
    again = await WriteFile().run({"path": "sub/a.txt", "content": "x"}, ctx)
    assert "replaced" in again.content


async def test_write_keeps_the_mode_and_leaves_no_temp_file(
    ctx: ToolContext, workspace: Path
) -> None:
    script = workspace / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    await WriteFile().run({"path": "run.sh", "content": "new"}, ctx)
    assert os.stat(script).st_mode & 0o777 == 0o755
    assert sorted(p.name for p in workspace.iterdir()) == ["run.sh"]


async def test_read_of_big_binary_and_missing_files(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "big.txt").write_text("x" * 500)
    big = await ReadFile().run({"path": "big.txt"}, ctx)
    assert (
        big.ok
        and big.truncated
        and big.content.startswith("x" * 100)
        and "line 1 is 500 B: only its first 100 B shown" in big.content
    )
    (workspace / "blob.bin").write_bytes(b"\x00\x01" * 50)
    blob = await ReadFile().run({"path": "blob.bin"}, ctx)
    assert blob.ok and "binary file" in blob.content
    missing = await ReadFile().run({"path": "nope"}, ctx)
    assert not missing.ok and "no such file" in missing.content


async def test_list_dir_marks_folders_and_caps_entries(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "d").mkdir()
    for name in "abc":
        (workspace / name).write_text(name)
    out = await ListDir().run({"path": "."}, ctx)
    assert out.content.splitlines()[:3] == ["a  1 B", "b  1 B", "c  1 B"]
    assert out.truncated and "1 more entries" in out.content
    empty = await ListDir().run({"path": "d"}, ctx)
    assert "empty folder" in empty.content


async def test_tools_refuse_paths_outside(ctx: ToolContext) -> None:
    with pytest.raises(OutsideWorkspace):
        await WriteFile().run({"path": "../escape.txt", "content": "x"}, ctx)
    with pytest.raises(OutsideWorkspace):
        await ReadFile().run({"path": "/etc/hostname"}, ctx)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument 'path'"),
        ({"path": 1}, "must be a string"),
        ({"path": "a", "mode": "x"}, "unknown argument"),
    ],
)
def test_bad_arguments(args: dict[str, object], message: str) -> None:
    with pytest.raises(ToolArgumentError, match=message):
        check_args(ReadFile(), args)


async def test_a_long_file_is_read_in_parts(ctx: ToolContext, workspace: Path) -> None:
    """The read limit (100 bytes here) cuts at a line; the model is told the range
    and reads on from there, with offset and limit (numbers, or numbers as text)."""
    (workspace / "long.txt").write_text("".join(f"line {n:02}\n" for n in range(1, 41)))
    first = await ReadFile().run({"path": "long.txt"}, ctx)
    assert first.ok and first.truncated
    assert first.content.startswith("line 01\nline 02\n")
    assert first.content.endswith("[lines 1 to 12 of a 320 B file shown; read on with offset=13]")
    part = await ReadFile().run({"path": "long.txt", "offset": 13, "limit": "3"}, ctx)
    assert part.content.startswith("line 13\nline 14\nline 15\n… [lines 13 to 15")
    last = await ReadFile().run({"path": "long.txt", "offset": 39}, ctx)
    assert last.content == "line 39\nline 40\n… [lines 39 to 40: the end of the file]"
    past = await ReadFile().run({"path": "long.txt", "offset": 41}, ctx)
    assert not past.ok and "has 40 lines; offset 41 is past the end" in past.content
    with pytest.raises(ToolArgumentError, match="whole number"):
        await ReadFile().run({"path": "long.txt", "offset": 0}, ctx)
