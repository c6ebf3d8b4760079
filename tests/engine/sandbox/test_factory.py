from pathlib import Path

import pytest

from server.engine.sandbox.base import SandboxError
from server.engine.sandbox.factory import open_sandbox
from server.engine.workspace import open_workspace
from tests.conftest import require_program
from tests.engine.sandbox.test_worktree import make_repo


def _open(name: str, workspace: Path, tmp_path: Path) -> str:
    sandbox = open_sandbox(
        name, open_workspace(workspace), run_id="run-1", worktrees_dir=tmp_path / "worktrees"
    )
    sandbox.close()
    return sandbox.name


def test_local(workspace: Path, tmp_path: Path) -> None:
    assert _open("local", workspace, tmp_path) == "local"


def test_local_hardened(workspace: Path, tmp_path: Path) -> None:
    require_program("bwrap")
    assert _open("local-hardened", workspace, tmp_path) == "local-hardened"


def test_worktree(workspace: Path, tmp_path: Path) -> None:
    make_repo(workspace)
    assert _open("worktree", workspace, tmp_path) == "worktree"
    assert (tmp_path / "worktrees" / "run-1" / "tracked.txt").is_file()


def test_an_unknown_name_lists_the_choices(workspace: Path, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match=r"'docker'.*local, local-hardened, worktree"):
        _open("docker", workspace, tmp_path)
