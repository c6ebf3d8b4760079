"""The ``worktree`` sandbox: a run works in a git worktree of its own, on a new
branch ``sparrow/<run_id>`` started from the workspace's HEAD, so its edits
never touch the user's working tree or index until the user merges them."""

from __future__ import annotations

import re
from pathlib import Path

import pygit2

from server.engine.sandbox.base import SandboxError
from server.engine.sandbox.local import LocalSandbox
from server.engine.workspace import Workspace

# The run id names a folder, a worktree (a folder under .git/worktrees) and a
# branch: keep it to characters that are safe in all three on every platform.
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def branch_name(run_id: str) -> str:
    return f"sparrow/{run_id}"


class WorktreeSandbox(LocalSandbox):
    """The local sandbox, in a worktree of the run's own. Created from HEAD:
    uncommitted changes in the workspace are not in it.

    ``close()`` leaves the worktree folder and its branch in place: they hold
    the run's work, for the user to review, merge or delete (``git worktree
    remove``, ``git branch -D``)."""

    name = "worktree"

    def __init__(self, workspace: Workspace, *, run_id: str, worktrees_dir: Path) -> None:
        if not _RUN_ID.fullmatch(run_id) or run_id.endswith(".lock"):
            raise SandboxError(f"the worktree sandbox cannot use the run id {run_id!r} as a name")
        repo, inside = _open_repository(workspace.root)
        try:
            self.path = worktrees_dir / run_id
            self.branch = branch_name(run_id)
            _add_worktree(repo, run_id, self.path, self.branch)
        finally:
            repo.free()
        # A workspace in a subfolder of its repository maps to the same
        # subfolder of the worktree.
        self.root: Path = self.path / inside
        self.note = (
            f"this run works in its own git worktree {self.root}, on the branch "
            f"{self.branch}; {workspace.root} itself is not changed. Review the work there, "
            f"commit it on the branch and merge it (git merge {self.branch}), or drop it "
            f"(sparrow worktrees prune --run {run_id} --force)"
        )



def _open_repository(root: Path) -> tuple[pygit2.Repository, Path]:
    """The repository holding ``root``, and where ``root`` is inside its working tree."""
    found = pygit2.discover_repository(str(root))
    if found is None:
        raise SandboxError(
            f"the worktree sandbox needs a git repository: {root} is not one "
            "(choose the sandbox 'local', or run `git init` and commit)"
        )
    repo = pygit2.Repository(found)
    if repo.is_bare or repo.workdir is None:
        repo.free()
        raise SandboxError(
            f"the worktree sandbox needs a repository with a working tree: {found} is bare "
            "(choose the sandbox 'local', or open a clone of it)"
        )
    if repo.head_is_unborn:
        repo.free()
        raise SandboxError(
            f"the worktree sandbox needs a commit to start from: the repository at "
            f"{repo.workdir} has none yet (commit once, or choose the sandbox 'local')"
        )
    workdir = Path(repo.workdir).resolve()
    resolved = root.resolve()
    inside = resolved.relative_to(workdir) if resolved.is_relative_to(workdir) else Path()
    return repo, inside


def _add_worktree(repo: pygit2.Repository, run_id: str, path: Path, branch: str) -> None:
    if path.exists():
        raise SandboxError(f"the worktree sandbox cannot use {path}: it already exists")
    head = repo.head.peel(pygit2.Commit)
    try:
        created = repo.branches.local.create(branch, head)
    except pygit2.AlreadyExistsError as exc:
        raise SandboxError(
            f"the worktree sandbox cannot create the branch {branch!r}: it already exists"
        ) from exc
    try:
        # libgit2 makes the worktree's own folder, not its parents.
        path.parent.mkdir(parents=True, exist_ok=True)
        repo.add_worktree(run_id, str(path), created)
    except (pygit2.GitError, OSError) as exc:
        # Nothing of the run exists yet: do not leave a branch behind for nothing.
        created.delete()
        raise SandboxError(f"the worktree sandbox could not create {path}: {exc}") from exc
