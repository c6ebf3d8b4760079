import time
from pathlib import Path

import pytest

from server.core.settings import Settings, ShellSettings
from server.engine.tools.base import Risk, ToolContext
from server.engine.tools.shell import RunShell
from server.engine.workspace import open_workspace

pytestmark = pytest.mark.anyio


def _ctx(workspace: Path, **shell: float) -> ToolContext:
    return ToolContext(open_workspace(workspace), Settings(shell=ShellSettings(**shell)))  # type: ignore[arg-type]


def test_risk_is_exec() -> None:
    assert RunShell.risk == Risk.EXEC


async def test_runs_in_the_workspace_and_reports_exit_code(workspace: Path) -> None:
    out = await RunShell().run({"command": "pwd; echo oops >&2; exit 3"}, _ctx(workspace))
    assert not out.ok
    assert (
        "exit code 3" in out.content
        and str(workspace.resolve()) in out.content
        and "oops" in out.content
    )


async def test_secrets_in_the_environment_are_not_passed_on(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    out = await RunShell().run({"command": "env"}, _ctx(workspace))
    assert out.ok and "sk-secret" not in out.content and "PATH=" in out.content


async def test_output_is_capped_without_blocking_the_child(workspace: Path) -> None:
    out = await RunShell().run(
        {"command": "yes line | head -c 200000"}, _ctx(workspace, output_limit_bytes=1000)
    )
    assert out.ok and out.truncated and "more characters not shown" in out.content


async def test_a_timeout_kills_the_command_and_its_children(workspace: Path) -> None:
    marker = workspace / "child.pid"
    out = await RunShell().run(
        {"command": f"sleep 30 & echo $! > {marker}; wait"}, _ctx(workspace, timeout_seconds=0.5)
    )
    assert not out.ok and "timed out" in out.content
    child = int(marker.read_text())
    for _ in range(100):  # SIGKILL lands asynchronously; give it a bounded moment
        if not _running(child):
            break
        time.sleep(0.05)
    assert not _running(child)


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie may wait for a reaper that never comes)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def test_empty_command(workspace: Path) -> None:
    out = await RunShell().run({"command": "  "}, _ctx(workspace))
    assert not out.ok and "empty" in out.content
