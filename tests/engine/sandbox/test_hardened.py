import shlex
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.core.settings import Settings, ShellSettings
from server.engine.sandbox.base import SandboxError
from server.engine.sandbox.hardened import HardenedSandbox
from server.engine.sandbox.local import LocalSandbox
from server.engine.tools.base import ToolContext
from server.engine.tools.shell import RunShell
from server.engine.workspace import Workspace, open_workspace
from tests.conftest import require_program

pytestmark = pytest.mark.anyio


@pytest.fixture
def hardened(workspace: Path) -> Iterator[HardenedSandbox]:
    require_program("bwrap")
    sandbox = HardenedSandbox(open_workspace(workspace))
    yield sandbox
    sandbox.close()


def _ctx(workspace: Path, sandbox: object, **shell: float) -> ToolContext:
    settings = Settings(shell=ShellSettings(**shell))  # type: ignore[arg-type]
    return ToolContext(open_workspace(workspace), settings, sandbox=sandbox)  # type: ignore[arg-type]


async def test_runs_in_the_workspace_and_can_write_there(
    workspace: Path, hardened: HardenedSandbox
) -> None:
    assert hardened.name == "local-hardened" and hardened.root == workspace.resolve()
    out = await RunShell().run({"command": "pwd; echo made > made.txt"}, _ctx(workspace, hardened))
    assert out.ok and str(workspace.resolve()) in out.content, out.content
    assert (workspace / "made.txt").read_text() == "made\n"


async def test_cannot_write_outside_the_workspace(
    workspace: Path, tmp_path: Path, hardened: HardenedSandbox
) -> None:
    beside = tmp_path / "beside.txt"
    out = await RunShell().run({"command": f"echo x > {beside}"}, _ctx(workspace, hardened))
    # /tmp is a private tmpfs in there: the write may "succeed" into it, but
    # nothing lands on the real disk.
    assert not beside.exists(), out.content
    probe = Path("/usr/sparrow-sandbox-probe")
    try:
        out = await RunShell().run({"command": f"touch {probe}"}, _ctx(workspace, hardened))
        assert not out.ok and "Read-only file system" in out.content and not probe.exists()
    finally:
        probe.unlink(missing_ok=True)


async def test_cannot_write_the_workspaces_git(workspace: Path) -> None:
    require_program("bwrap")
    (workspace / ".git").mkdir()
    sandbox = HardenedSandbox(open_workspace(workspace))
    out = await RunShell().run(
        {"command": "echo x > .git/HEAD; echo y > tracked.txt"}, _ctx(workspace, sandbox)
    )
    assert "cannot create .git/HEAD: Read-only file system" in out.content
    assert not (workspace / ".git" / "HEAD").exists()
    assert (workspace / "tracked.txt").read_text() == "y\n"


async def test_network_is_off(workspace: Path, hardened: HardenedSandbox) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        script = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
        connect = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} && echo connected"
        # The same command reaches the listener from outside: the test is not vacuous.
        local = LocalSandbox(Workspace(workspace))
        plain = await RunShell().run({"command": connect}, _ctx(workspace, local))
        assert plain.ok and "connected" in plain.content, plain.content
        out = await RunShell().run({"command": connect}, _ctx(workspace, hardened))
    assert not out.ok and "stdout:\nconnected" not in out.content, out.content


async def test_a_timeout_kills_background_children_too(
    workspace: Path, hardened: HardenedSandbox
) -> None:
    out = await RunShell().run(
        {"command": "(sleep 1; echo late > late.txt) & wait"},
        _ctx(workspace, hardened, timeout_seconds=0.3),
    )
    assert not out.ok and "timed out" in out.content
    time.sleep(1.5)
    assert not (workspace / "late.txt").exists()


def test_secrets_stay_out_and_tmp_is_private(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    require_program("bwrap")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("TMPDIR", "/var/tmp")
    env = HardenedSandbox(open_workspace(workspace)).environment()
    assert "ANTHROPIC_API_KEY" not in env and env["TMPDIR"] == "/tmp"


def test_without_bwrap_the_error_names_bubblewrap(
    monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(SandboxError, match=r"bubblewrap \('bwrap'\).*install the package"):
        HardenedSandbox(open_workspace(workspace))


def test_a_bwrap_that_cannot_work_here_fails_at_open_with_its_words(
    monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path
) -> None:
    # A real program standing in for a bwrap refused by the kernel.
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    with pytest.raises(SandboxError, match="No permissions to create new namespace"):
        HardenedSandbox(open_workspace(workspace))


async def test_credentials_in_the_home_folder_are_hidden(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_program("bwrap")
    # Not under /tmp: the sandbox's private /tmp would hide everything there anyway.
    home = Path(tempfile.mkdtemp(prefix="sparrow-home-", dir="/var/tmp"))
    try:
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
        (home / ".netrc").write_text("machine example.com password hunter2")
        (home / "notes.txt").write_text("not a secret")
        monkeypatch.setenv("HOME", str(home))
        sandbox = HardenedSandbox(open_workspace(workspace))
        command = f"cat {home}/.ssh/id_ed25519 {home}/.netrc {home}/notes.txt; ls -A {home}/.ssh"
        out = await RunShell().run({"command": command}, _ctx(workspace, sandbox))
        assert "PRIVATE KEY" not in out.content and "hunter2" not in out.content
        assert "id_ed25519" not in out.content.split("stderr:")[0]
        assert "not a secret" in out.content  # the rest of the home folder reads as before
        assert (home / ".ssh" / "id_ed25519").read_text() == "PRIVATE KEY"  # untouched
    finally:
        shutil.rmtree(home)
