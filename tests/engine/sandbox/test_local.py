from pathlib import Path

import pytest

from server.core.settings import Settings
from server.engine.sandbox.local import LocalSandbox
from server.engine.tools.base import ToolContext
from server.engine.tools.shell import RunShell
from server.engine.workspace import open_workspace

pytestmark = pytest.mark.anyio


def test_runs_commands_unchanged_in_the_workspace(workspace: Path) -> None:
    sandbox = LocalSandbox(open_workspace(workspace))
    assert sandbox.name == "local" and sandbox.root == workspace.resolve()
    assert sandbox.command(["/bin/sh", "-c", "true"]) == ["/bin/sh", "-c", "true"]
    sandbox.close()


def test_environment_is_the_allow_list(monkeypatch: pytest.MonkeyPatch, workspace: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = LocalSandbox(open_workspace(workspace)).environment()
    assert "ANTHROPIC_API_KEY" not in env and env["LANG"] == "C.UTF-8" and env["PATH"]


async def test_run_shell_runs_in_it(workspace: Path) -> None:
    sandbox = LocalSandbox(open_workspace(workspace))
    ctx = ToolContext(open_workspace(workspace), Settings(), sandbox=sandbox)
    out = await RunShell().run({"command": "pwd; echo made > made.txt"}, ctx)
    assert out.ok and str(workspace.resolve()) in out.content
    assert (workspace / "made.txt").read_text() == "made\n"
