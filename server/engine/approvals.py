"""Asking a person: what a paused call shows, what an answer says, and who
answers when nobody can (a run with no surface to ask on)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from wcmatch import glob

from server.engine.permissions.commands import split_command
from server.engine.permissions.rules import Scope

AnswerKind = Literal["allow_once", "allow_always", "deny", "timeout"]


@dataclass(frozen=True)
class ApprovalQuestion:
    run_id: str
    call_id: str
    tool: str
    args: dict[str, Any]
    risk: str
    reason: str
    suggested_rules: tuple[str, ...]  # what "allow always" saves
    timeout_seconds: float
    expires_at: float = 0.0  # when the wait ends in a timeout (seconds since the epoch)

    @property
    def suggested_rule(self) -> str:
        return ", ".join(self.suggested_rules)


@dataclass(frozen=True)
class ApprovalAnswer:
    decision: AnswerKind
    scope: Scope = Scope.SESSION  # where "allow always" saves its rule
    message: str = ""  # with a deny: what the model is told
    by: str = ""  # the surface that answered

    @property
    def allows(self) -> bool:
        return self.decision in ("allow_once", "allow_always")


class Approver(Protocol):
    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        """Wait for a person's answer (the loop bounds the wait)."""
        ...


class Unattended:
    """For runs nobody watches: what would ask is denied, or with ``yes``, allowed once."""

    def __init__(self, *, yes: bool = False, by: str = "non-interactive") -> None:
        self.yes = yes
        self.by = by

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        if self.yes:
            return ApprovalAnswer("allow_once", by=f"{self.by} (--yes)")
        return ApprovalAnswer(
            "deny",
            message="nobody could be asked (a non-interactive run; --yes allows such calls)",
            by=self.by,
        )


def suggest_rules(tool: str, args: dict[str, Any]) -> tuple[str, ...]:
    """The narrowest rules that allow this exact call again: the path, the
    command (each part of a compound one), or the domain."""
    command = args.get("command")
    if tool == "run_shell" and isinstance(command, str):
        parts = split_command(command).parts or (command.strip(),)
        return tuple(dict.fromkeys(f"run_shell({part})" for part in parts))
    url = args.get("url")
    if tool == "fetch_url" and isinstance(url, str):
        host = urlsplit(url).hostname
        return (f"fetch_url(domain:{host})",) if host else (tool,)
    path = args.get("path")
    if isinstance(path, str) and path.strip():
        return (f"{tool}({glob.escape(path.strip())})",)
    return (tool,)
