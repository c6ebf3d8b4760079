"""What every sandbox offers the tools."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class SandboxError(RuntimeError):
    """A sandbox that cannot be set up; the message names what is missing."""


class Sandbox(Protocol):
    name: str
    # The folder the run works in: the workspace, or the run's own worktree.
    root: Path
    # What the user should know about where the run's work lands ("" for nothing).
    note: str

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` wrapped so that it runs inside the sandbox."""
        ...

    def environment(self) -> dict[str, str]:
        """The environment a command gets (an allow-list of the parent's)."""
        ...

    def close(self) -> None:
        """Release what the sandbox holds (its worktree stays for the user to see)."""
        ...
