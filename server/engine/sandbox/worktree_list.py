"""The worktrees that ``worktree`` sandbox runs left behind: what each holds,
and removing those whose runs are over without losing work.

A run's worktree lives in ``<state>/worktrees/<run_id>`` on the branch
``sparrow/<run_id>`` of the user's repository. Its work is either committed
on that branch or still uncommitted in the folder; pruning never drops
either without ``force``."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pygit2

from server.engine.sandbox.worktree import branch_name


@dataclass(frozen=True)
class RunWorktree:
    run_id: str
    path: str
    branch: str
    repository: str  # the user's repository (its working tree), "" when it is gone
    commits: int  # on the branch and not in the repository's HEAD
    uncommitted: int  # changed or new files in the worktree
    run_status: str  # from the store; "unknown" for a run it does not know
    problem: str = ""  # why it cannot be read, when it cannot

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def merge_hint(self) -> str:
        return (
            f"merge: git -C {self.repository} merge {self.branch}; "
            f"drop: sparrow worktrees prune --run {self.run_id}"
        )


@dataclass(frozen=True)
class Pruned:
    run_id: str
    removed: bool
    said: str


def _main_gitdir(worktree: Path) -> Path | None:
    """The user's .git folder, from the worktree's ``.git`` file."""
    try:
        text = (worktree / ".git").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    admin = Path(text.removeprefix("gitdir:").strip())  # <repo>/.git/worktrees/<name>
    return admin.parent.parent


def describe(folder: Path, status_of: Callable[[str], str]) -> RunWorktree:
    run_id = folder.name
    branch = branch_name(run_id)
    status = status_of(run_id)
    gitdir = _main_gitdir(folder)
    if gitdir is None or not gitdir.is_dir():
        return RunWorktree(run_id, str(folder), branch, "", 0, 0, status,
                           "not a git worktree any more (its repository is gone or moved)")
    try:
        main = pygit2.Repository(str(gitdir))
        mine = pygit2.Repository(str(folder))
    except pygit2.GitError as exc:
        return RunWorktree(run_id, str(folder), branch, "", 0, 0, status, str(exc))
    try:
        commits = 0
        found = main.branches.local.get(branch)
        if found is not None and not main.head_is_unborn:
            commits = main.ahead_behind(found.target, main.head.target)[0]
        changes = [s for s in mine.status().values() if s != pygit2.enums.FileStatus.IGNORED]
        return RunWorktree(run_id, str(folder), branch, (main.workdir or "").rstrip("/"),
                           commits, len(changes), status)
    finally:
        main.free()
        mine.free()


def list_worktrees(
    worktrees_dir: Path, status_of: Callable[[str], str]
) -> list[RunWorktree]:
    """``status_of``: a run's status by its id ("unknown" for a run not recorded)."""
    if not worktrees_dir.is_dir():
        return []
    folders = sorted(p for p in worktrees_dir.iterdir() if p.is_dir())
    return [describe(folder, status_of) for folder in folders]


def prune(found: RunWorktree, *, force: bool) -> Pruned:
    """Remove a finished run's worktree; its branch too when nothing is on it."""
    if found.run_status == "running":
        return Pruned(found.run_id, False, "kept: the run is still running")
    if found.uncommitted and not force:
        return Pruned(found.run_id, False,
                      f"kept: {found.uncommitted} uncommitted change(s), the run's work: review "
                      f"them in {found.path} (commit them on {found.branch} to keep them), or "
                      "prune with --force to drop them")
    said = [f"removed {found.path}"]
    gitdir = _main_gitdir(Path(found.path))
    shutil.rmtree(found.path, ignore_errors=True)
    if gitdir is not None and gitdir.is_dir():
        main = pygit2.Repository(str(gitdir))
        try:
            # Git's own record of it may be gone already.
            with contextlib.suppress(pygit2.GitError, KeyError, ValueError):
                main.lookup_worktree(found.run_id).prune(True)
            branch = main.branches.local.get(found.branch)
            if branch is not None:
                if found.commits and not force:
                    said.append(f"branch {found.branch} kept: {found.commits} commit(s) not in "
                                f"HEAD (git branch -D {found.branch} drops it)")
                else:
                    branch.delete()
                    said.append(f"branch {found.branch} deleted")
        finally:
            main.free()
    return Pruned(found.run_id, True, "; ".join(said))
