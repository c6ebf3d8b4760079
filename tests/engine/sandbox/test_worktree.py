from pathlib import Path

import pygit2
import pytest

from server.core.settings import Settings
from server.engine.sandbox.base import SandboxError
from server.engine.sandbox.worktree import WorktreeSandbox
from server.engine.tools.base import ToolContext
from server.engine.tools.shell import RunShell
from server.engine.workspace import open_workspace

pytestmark = pytest.mark.anyio


def make_repo(folder: Path) -> pygit2.Repository:
    """A repository with one commit of ``tracked.txt``."""
    repo = pygit2.init_repository(str(folder))
    (folder / "tracked.txt").write_text("original\n")
    repo.index.add("tracked.txt")
    repo.index.write()
    someone = pygit2.Signature("Test", "test@example.com")
    repo.create_commit("HEAD", someone, someone, "first", repo.index.write_tree(), [])
    return repo


def _open(workspace: Path, tmp_path: Path, run_id: str = "run-1") -> WorktreeSandbox:
    return WorktreeSandbox(
        open_workspace(workspace), run_id=run_id, worktrees_dir=tmp_path / "worktrees"
    )


def test_a_worktree_on_its_own_branch(workspace: Path, tmp_path: Path) -> None:
    repo = make_repo(workspace)
    sandbox = _open(workspace, tmp_path)
    assert sandbox.name == "worktree" and sandbox.root == tmp_path / "worktrees" / "run-1"
    assert (sandbox.root / "tracked.txt").read_text() == "original\n"
    branch = repo.branches.local["sparrow/run-1"]
    assert branch.target == repo.head.target and repo.head.shorthand != "sparrow/run-1"
    assert repo.list_worktrees() == ["run-1"]
    assert pygit2.Repository(str(sandbox.root)).head.name == "refs/heads/sparrow/run-1"
    sandbox.close()
    # Closing keeps the run's work for the user to review.
    assert sandbox.root.is_dir() and "sparrow/run-1" in repo.branches.local


async def test_run_shell_edits_the_worktree_not_the_workspace(
    workspace: Path, tmp_path: Path
) -> None:
    repo = make_repo(workspace)
    index_before = [(e.path, e.id) for e in repo.index]
    head_before = repo.head.target
    sandbox = _open(workspace, tmp_path)
    ctx = ToolContext(open_workspace(workspace), Settings(), sandbox=sandbox)
    out = await RunShell().run(
        {"command": "pwd; echo changed > tracked.txt; echo new > added.txt"}, ctx
    )
    assert out.ok and str(sandbox.root) in out.content, out.content
    assert (sandbox.root / "tracked.txt").read_text() == "changed\n"
    assert (sandbox.root / "added.txt").read_text() == "new\n"
    assert (workspace / "tracked.txt").read_text() == "original\n"
    assert not (workspace / "added.txt").exists()
    repo = pygit2.Repository(str(workspace))  # re-read from disk
    assert repo.status() == {} and repo.head.target == head_before
    assert [(e.path, e.id) for e in repo.index] == index_before


def test_a_workspace_in_a_subfolder_maps_to_the_same_subfolder(
    workspace: Path, tmp_path: Path
) -> None:
    make_repo(workspace)
    (workspace / "sub").mkdir()
    sandbox = _open(workspace / "sub", tmp_path)
    assert sandbox.root == tmp_path / "worktrees" / "run-1" / "sub"


def test_a_folder_that_is_not_a_repository(workspace: Path, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match=r"needs a git repository: .* is not one.*git init"):
        _open(workspace, tmp_path)


def test_a_repository_without_commits(workspace: Path, tmp_path: Path) -> None:
    pygit2.init_repository(str(workspace))
    with pytest.raises(SandboxError, match="needs a commit to start from"):
        _open(workspace, tmp_path)
    assert not (tmp_path / "worktrees" / "run-1").exists()


def test_a_bare_repository(workspace: Path, tmp_path: Path) -> None:
    pygit2.init_repository(str(workspace), bare=True)
    with pytest.raises(SandboxError, match="is bare"):
        _open(workspace, tmp_path)


def test_the_same_run_twice_is_refused(workspace: Path, tmp_path: Path) -> None:
    make_repo(workspace)
    _open(workspace, tmp_path)
    with pytest.raises(SandboxError, match="already exists"):
        _open(workspace, tmp_path)


def test_a_run_id_that_cannot_name_a_branch(workspace: Path, tmp_path: Path) -> None:
    make_repo(workspace)
    with pytest.raises(SandboxError, match="run id"):
        _open(workspace, tmp_path, run_id="../escape")
