"""Permission rules: allow / ask / deny a tool, optionally for a path glob, a
command or a domain, at a scope (this session, this workspace, everywhere),
optionally only for a provider or a surface.

A rule is written as Claude Code writes its rules, ``Tool`` or
``Tool(pattern)``: ``write_file(src/**)``, ``Bash(npm test:*)``,
``Read(./.env)``, ``fetch_url(domain:example.com)``. Tool names are ours
(exact: ``read_file`` never matches ``read_file2``), ``*`` for every tool, or
a Claude Code name standing for a fixed set of ours (``CLAUDE_TOOLS``)."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Final

from wcmatch import glob

from server.engine.permissions.commands import command_pattern_matches
from server.engine.permissions.protected import PROTECTED_NAMES


class Effect(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class Scope(StrEnum):
    SESSION = "session"
    WORKSPACE = "workspace"
    GLOBAL = "global"


class RuleError(ValueError):
    """A rule that cannot be used as written; the message says why."""


# Claude Code's tool names and the tools of ours they stand for. Deleting is
# not editing here: `Edit(src/**)` must not let an agent delete src/ unasked.
CLAUDE_TOOLS: Final[dict[str, tuple[str, ...]]] = {
    "Bash": ("run_shell",),
    "Read": ("read_file", "list_dir", "grep", "glob"),
    "LS": ("list_dir",),
    "Glob": ("glob",),
    "Grep": ("grep",),
    "Edit": ("edit_file", "write_file"),
    "MultiEdit": ("edit_file",),
    "Write": ("write_file",),
    "WebFetch": ("fetch_url",),
}
SHELL_TOOLS: Final = frozenset({"run_shell", "Bash"})
NETWORK_TOOLS: Final = frozenset({"fetch_url", "WebFetch"})
_SPEC: Final = re.compile(r"^\s*([A-Za-z_*][A-Za-z0-9_\-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_GLOB_FLAGS: Final = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE


@dataclass(frozen=True)
class Rule:
    effect: Effect
    tool: str
    pattern: str | None = None
    scope: Scope = Scope.GLOBAL
    workspace: str | None = None
    session_id: str | None = None
    provider: str | None = None
    surface: str | None = None
    id: str = ""
    source: str = "user"  # user | default | claude-settings
    hits: int = 0
    last_used_at: float | None = None
    created_at: float = 0.0

    @property
    def spec(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"

    def to_dict(self) -> dict[str, Any]:
        """The Rule object of docs/api.md."""
        return {
            "id": self.id,
            "effect": self.effect.value,
            "spec": self.spec,
            "tool": self.tool,
            "pattern": self.pattern,
            "scope": self.scope.value,
            "workspace": self.workspace,
            "session_id": self.session_id,
            "provider": self.provider,
            "surface": self.surface,
            "source": self.source,
            "hits": self.hits,
            "last_used_at": self.last_used_at,
            "created_at": self.created_at,
        }

    @property
    def kind(self) -> str:
        """What the pattern is: a command, a domain, or a path."""
        if self.tool in SHELL_TOOLS:
            return "command"
        if self.tool in NETWORK_TOOLS:
            return "domain"
        return "path"

    def names_tool(self, tool: str) -> bool:
        return self.tool in ("*", tool) or tool in CLAUDE_TOOLS.get(self.tool, ())

    def applies_to(self, *, workspace: str, session_id: str, provider: str, surface: str) -> bool:
        if self.scope == Scope.WORKSPACE and self.workspace != workspace:
            return False
        if self.scope == Scope.SESSION and self.session_id != session_id:
            return False
        # A rule for "anthropic" holds for every model of it ("anthropic:claude-…").
        if self.provider is not None and not (
            provider == self.provider or provider.startswith(self.provider + ":")
        ):
            return False
        return self.surface is None or self.surface == surface

    def matches_path(self, relative: str) -> bool:
        """``relative``: a workspace-relative posix path; a rule for a folder
        also covers what is inside it."""
        assert self.pattern is not None
        flags = _GLOB_FLAGS | (glob.IGNORECASE if self.effect != Effect.ALLOW else 0)
        pattern = _path_pattern(self.pattern)
        patterns = [pattern] if "/" in pattern else [pattern, f"**/{pattern}"]
        candidate = relative
        while True:
            if glob.globmatch(candidate, patterns, flags=flags):
                return True
            if "/" not in candidate:
                return False
            candidate = candidate.rsplit("/", 1)[0]

    def matches_command(self, part: str) -> bool:
        assert self.pattern is not None
        return command_pattern_matches(self.pattern, part)

    def matches_domain(self, host: str) -> bool:
        assert self.pattern is not None
        wanted = self.pattern.removeprefix("domain:").strip().lower()
        host = host.lower()
        if wanted.startswith("*."):
            return host.endswith(wanted[1:])
        return host == wanted


def _path_pattern(pattern: str) -> str:
    text = pattern.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    # Claude Code: "/x" is relative to the settings' root, which is the workspace.
    if text.startswith("/") and not text.startswith("//"):
        text = text[1:]
    return text.rstrip("/") or "**"


def parse_spec(text: str, known_tools: Collection[str]) -> tuple[str, str | None]:
    """``Tool`` or ``Tool(pattern)`` -> (tool, pattern); RuleError when it is not
    a rule this Sparrow can apply."""
    match = _SPEC.match(text)
    if match is None:
        raise RuleError(
            f"{text!r} is not a rule: write a tool name, optionally with a pattern in "
            "parentheses, e.g. write_file(src/**) or Bash(npm test:*)"
        )
    tool, pattern = match.group(1), match.group(2)
    if tool != "*" and tool not in known_tools and tool not in CLAUDE_TOOLS:
        names = ", ".join(sorted(known_tools))
        raise RuleError(f"no tool is named {tool!r}; the tools are {names} (or * for all)")
    if pattern is not None:
        pattern = pattern.strip()
        if not pattern:
            raise RuleError(f"{text!r}: the pattern in parentheses is empty")
        _check_pattern(tool, pattern, text)
        if tool in SHELL_TOOLS or tool in NETWORK_TOOLS:
            return tool, pattern
        # Read(./.env) and Read(.env) are one rule: store the path as it is matched.
        return tool, _path_pattern(pattern) if pattern.startswith("./") else pattern
    return tool, None


def _check_pattern(tool: str, pattern: str, text: str) -> None:
    if tool in NETWORK_TOOLS:
        if not pattern.startswith("domain:") or not pattern.removeprefix("domain:").strip():
            raise RuleError(f"{text!r}: a fetch_url rule names a domain, e.g. domain:example.com")
        return
    if tool in SHELL_TOOLS:
        return
    path = pattern.replace("\\", "/")
    if path.startswith(("//", "~")) or re.match(r"^[A-Za-z]:/", path):
        raise RuleError(
            f"{text!r}: rule paths are relative to the workspace; nothing outside it is "
            "ever reachable"
        )
    if ".." in path.split("/"):
        raise RuleError(f"{text!r}: '..' cannot appear in a rule path")


def make_rule(
    effect: str,
    spec: str,
    known_tools: Collection[str],
    *,
    scope: str = "global",
    workspace: str | None = None,
    session_id: str | None = None,
    provider: str | None = None,
    surface: str | None = None,
    source: str = "user",
) -> Rule:
    try:
        parsed_effect = Effect(effect)
    except ValueError:
        raise RuleError(f"unknown effect {effect!r}: allow, ask or deny") from None
    try:
        parsed_scope = Scope(scope)
    except ValueError:
        raise RuleError(f"unknown scope {scope!r}: session, workspace or global") from None
    if parsed_scope == Scope.WORKSPACE and not workspace:
        raise RuleError("a workspace rule needs its workspace")
    if parsed_scope == Scope.SESSION and not session_id:
        raise RuleError("a session rule needs its session")
    tool, pattern = parse_spec(spec, known_tools)
    return Rule(
        effect=parsed_effect,
        tool=tool,
        pattern=pattern,
        scope=parsed_scope,
        workspace=workspace if parsed_scope == Scope.WORKSPACE else None,
        session_id=session_id if parsed_scope == Scope.SESSION else None,
        provider=provider or None,
        surface=surface or None,
        source=source,
    )


DEFAULT_RULES: Final = tuple(
    Rule(effect=Effect.DENY, tool="*", pattern=name, id=f"default:{name}", source="default")
    for name in PROTECTED_NAMES
)


def with_id(rule: Rule, rule_id: str, created_at: float) -> Rule:
    return replace(rule, id=rule_id, created_at=created_at)
