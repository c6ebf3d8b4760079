"""The ``[hooks]`` settings: shell commands run on the loop's events.

Parsing is strict like the rest of the settings: a hook that silently never
runs (a typo in an event name, a matcher that cannot match) is a safety check
the user believes in but does not have. The matcher rules live here too, so the
TOML entries and the Claude Code ones (server/engine/hooks/claude.py) match alike.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Any, Final

from server.core.config_keys import config_key, toml_name

HOOK_EVENTS: Final = (
    "SessionStart",
    "PreToolUse",
    "PostToolUse",
    "PreCheckpoint",
    "PostCheckpoint",
    "PreCompact",
    "PostCompact",
    "Stop",
    "Notification",
    "OnApprovalRequested",
)

# Claude Code's tool names as ours, so a matcher copied from a settings.json works.
CLAUDE_TOOL_NAMES: Final = {
    "Bash": "run_shell",
    "Read": "read_file",
    "LS": "list_dir",
    "Glob": "glob",
    "Grep": "grep",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "WebFetch": "fetch_url",
}

_REGEX_CHARS: Final = frozenset(".^$*+?()[]{}\\")
_SETTINGS: Final = ("timeout_seconds", "output_limit_bytes", "claude_settings", "workspace_hooks")
_ENTRY_KEYS: Final = ("command", "matcher", "timeout_seconds")


class HookConfigError(ValueError):
    """A hook section that cannot be used as written; names the file and key."""


@dataclass(frozen=True)
class HookSpec:
    event: str
    command: str
    matcher: str = ""  # "" or "*": every tool; else exact names separated by "|"
    timeout_seconds: float | None = None  # None: the [hooks] default
    source: str = ""  # the file it came from

    def matches(self, tool: str | None) -> bool:
        """Whether this hook runs for ``tool``; an event without a tool ignores the matcher."""
        return tool is None or matcher_matches(self.matcher, tool)


@dataclass(frozen=True)
class HookConfig:
    timeout_seconds: float = 60.0
    output_limit_bytes: int = 64_000
    # Claude Code settings.json files whose "hooks" section is used as well
    # (relative paths: to the workspace).
    claude_settings: tuple[str, ...] = ()
    entries: tuple[HookSpec, ...] = ()
    # Whether a workspace's own .sparrow/config.toml may add hooks: commands a
    # cloned repository would run on this machine. Off unless the user says so.
    workspace_hooks: bool = False


def matcher_error(matcher: str) -> str | None:
    """Why ``matcher`` cannot be used, or None when it can."""
    for part in _parts(matcher):
        if _is_regex(part):
            try:
                re.compile(part)
            except re.error as exc:
                return f"'{part}' is not a valid regular expression ({exc})"
    return None


def matcher_matches(matcher: str, tool: str) -> bool:
    """Exact names split on "|"; a part with regex characters must fullmatch.

    Never a substring match: "run" must not select run_shell, or a hook meant
    for one tool would quietly gate another."""
    if matcher.strip() in ("", "*"):
        return True
    # A regex written against Claude's names ("Edit.*") sees those names too.
    names = {tool, *(claude for claude, ours in CLAUDE_TOOL_NAMES.items() if ours == tool)}
    for part in _parts(matcher):
        if _is_regex(part):
            pattern = _compiled(part)
            if pattern is not None and any(pattern.fullmatch(name) for name in names):
                return True
        elif CLAUDE_TOOL_NAMES.get(part, part) == tool:
            return True
    return False


def _parts(matcher: str) -> list[str]:
    return [part.strip() for part in matcher.split("|") if part.strip()]


def _is_regex(part: str) -> bool:
    return not _REGEX_CHARS.isdisjoint(part)


@functools.lru_cache(maxsize=256)
def _compiled(part: str) -> re.Pattern[str] | None:
    try:
        return re.compile(part)
    except re.error:
        return None


def parse_hook_config(current: HookConfig, table: dict[str, Any], file: str) -> HookConfig:
    """``current`` with the ``[hooks]`` table of ``file`` applied; entries and files
    are appended."""
    changes: dict[str, Any] = {}
    entries = list(current.entries)
    claude = list(current.claude_settings)
    for key, value in table.items():
        at = config_key(file, ("hooks",), key)
        if key == "timeout_seconds":
            changes[key] = _seconds(value, at)
        elif key == "output_limit_bytes":
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise HookConfigError(f"{at}: expected a positive int, got {value!r}")
            changes[key] = value
        elif key == "workspace_hooks":
            if not isinstance(value, bool):
                raise HookConfigError(f"{at}: expected true or false, got {value!r}")
            changes[key] = value
        elif key == "claude_settings":
            claude += [p for p in _paths(value, at) if p not in claude]
        elif key in HOOK_EVENTS:
            if not isinstance(value, list):
                raise HookConfigError(
                    f"{at}: expected a list of tables ([[hooks.{key}]]), got {type(value).__name__}"
                )
            entries += [
                # Counted from 1: "the first [[hooks.Stop]]" of the file.
                _entry(key, item, f"{file}: [[hooks.{key}]] #{i}", file)
                for i, item in enumerate(value, start=1)
            ]
        else:
            raise HookConfigError(
                f"{at}: unknown key (settings: {', '.join(_SETTINGS)}; "
                f"events: {', '.join(HOOK_EVENTS)})"
            )
    return dataclasses.replace(
        current, **changes, entries=tuple(entries), claude_settings=tuple(claude)
    )


def _entry(event: str, item: object, where: str, source: str) -> HookSpec:
    if not isinstance(item, dict):
        raise HookConfigError(f"{where}: expected a table, got {type(item).__name__}")
    for key in item:
        if key not in _ENTRY_KEYS:
            raise HookConfigError(
                f"{where} {toml_name(key)}: unknown key (known: {', '.join(_ENTRY_KEYS)})"
            )
    command = item.get("command")
    if not isinstance(command, str) or not command.strip():
        raise HookConfigError(f"{where} command: expected a non-empty string, got {command!r}")
    matcher = item.get("matcher", "")
    if not isinstance(matcher, str):
        raise HookConfigError(f"{where} matcher: expected a string, got {type(matcher).__name__}")
    problem = matcher_error(matcher)
    if problem:
        raise HookConfigError(f"{where} matcher: {problem}")
    timeout = item.get("timeout_seconds")
    return HookSpec(
        event=event,
        command=command,
        matcher=matcher,
        timeout_seconds=None if timeout is None else _seconds(timeout, f"{where} timeout_seconds"),
        source=source,
    )


def _seconds(value: object, where: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise HookConfigError(f"{where}: expected a positive number of seconds, got {value!r}")
    return float(value)


def _paths(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        raise HookConfigError(f"{where}: expected a list of file paths, got {value!r}")
    return list(value)
