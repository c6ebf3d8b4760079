"""Opens the sandbox a run's settings name."""

from __future__ import annotations

from pathlib import Path

from server.core.settings import SANDBOXES
from server.engine.sandbox.base import Sandbox, SandboxError
from server.engine.sandbox.hardened import HardenedSandbox
from server.engine.sandbox.local import LocalSandbox
from server.engine.workspace import Workspace


def open_sandbox(name: str, workspace: Workspace, *, run_id: str, worktrees_dir: Path) -> Sandbox:
    """The sandbox ``name`` for one run; a SandboxError says what is missing.

    Blocking: ``local-hardened`` runs a probe and ``worktree`` checks out files,
    so async callers run it in a worker thread."""
    if name == "local":
        return LocalSandbox(workspace)
    if name == "local-hardened":
        return HardenedSandbox(workspace)
    if name == "worktree":
        # pygit2 is heavy: it loads with the first worktree run, not at start-up.
        from server.engine.sandbox.worktree import WorktreeSandbox

        return WorktreeSandbox(workspace, run_id=run_id, worktrees_dir=worktrees_dir)
    raise SandboxError(f"unknown sandbox {name!r}: choose one of {', '.join(SANDBOXES)}")
