"""A reader that leaves early (`sparrow checkpoints --json | head -1`) ends any
command quietly: no traceback, and success (what argparse answers for --help)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from server.core.paths import resolve_paths
from server.engine.permissions.rulebook import RuleBook
from server.engine.store import Store
from server.engine.tools.registry import default_tools
from tests.cli.test_cli import SPARROW, ndjson


def closed_before_writing(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The command's stdout is a pipe whose reader is gone before it writes a byte."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [SPARROW, *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=cwd,
            timeout=120,
        )
    finally:
        os.close(write_end)


def assert_quiet(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "BrokenPipe" not in result.stderr, result.stderr
    assert "Exception ignored" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr


def test_head_one_after_many_rules_ends_quietly(sparrow_home: Path, workspace: Path) -> None:
    store = Store(resolve_paths().ensure().database)
    try:
        book = RuleBook(store, default_tools().names())
        for n in range(600):  # well past a pipe's 64 KiB buffer: the write really blocks
            book.create("allow", f"read_file(src{n}/**)", scope="global")
    finally:
        store.close()
    with subprocess.Popen(
        [SPARROW, "permissions", "list", "-w", str(workspace), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # what `head -1` does after its line
        stderr = process.stderr.read()
        code = process.wait(timeout=120)
    assert ndjson(first)[0]["effect"] in ("allow", "ask", "deny")
    assert_quiet(subprocess.CompletedProcess([], code, "", stderr))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["models", "--json"],
        ["models"],
        ["runs", "--json"],
        ["keys", "list", "--json"],
        ["autonomy", "--json"],
        ["permissions", "list", "--json"],
        ["permissions", "list"],
        ["monitor", "--once", "--json"],
        ["checkpoints", "--help"],
    ],
)
def test_a_closed_pipe_is_quiet_for_every_command(args: list[str], workspace: Path) -> None:
    assert_quiet(closed_before_writing(*args, cwd=workspace))


def test_run_checkpoints_and_replay_are_quiet_too(workspace: Path) -> None:
    demo = subprocess.run(
        [SPARROW, "run", "--demo", "-w", str(workspace), "--json", "hi"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert demo.returncode == 0, demo.stderr
    run_id = ndjson(demo.stdout)[0]["run_id"]
    assert_quiet(closed_before_writing("checkpoints", "--json", cwd=workspace))
    assert_quiet(closed_before_writing("checkpoints", cwd=workspace))
    assert_quiet(closed_before_writing("replay", run_id, "--json"))
    assert_quiet(closed_before_writing("replay", run_id))
    assert_quiet(closed_before_writing("run", "--demo", "-w", str(workspace), "--json", "again"))
    assert_quiet(closed_before_writing("run", "--demo", "-w", str(workspace), "again"))
