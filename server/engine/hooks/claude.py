"""The "hooks" section of a Claude Code settings.json, as our HookSpecs.

What Sparrow cannot honour (events it does not have, hook types other than
"command") is skipped and listed rather than refused: the same file keeps
working in Claude Code, and the user can see what did not carry over. A file
that is not what it claims to be is an error, like a bad config.toml.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from server.core.hook_config import HookConfigError, HookSpec, matcher_error

# The events Claude Code and Sparrow share; their payloads and exit codes agree.
SHARED_EVENTS: Final = (
    "PreToolUse",
    "PostToolUse",
    "SessionStart",
    "Stop",
    "Notification",
    "PreCompact",
)


@dataclass(frozen=True)
class SkippedHook:
    source: str
    event: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.event}: {self.reason}"


def load_claude_hooks(path: Path) -> tuple[list[HookSpec], list[SkippedHook]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise HookConfigError(f"{path}: Claude Code settings file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise HookConfigError(f"{path}: cannot be read: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookConfigError(f"{path}: not valid JSON: {exc}") from exc
    return parse_claude_hooks(data, str(path))


def parse_claude_hooks(data: object, source: str) -> tuple[list[HookSpec], list[SkippedHook]]:
    if not isinstance(data, dict):
        raise HookConfigError(f"{source}: expected a JSON object, got {type(data).__name__}")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise HookConfigError(f"{source}: 'hooks' must be an object")
    specs: list[HookSpec] = []
    skipped: list[SkippedHook] = []
    for event, groups in hooks.items():
        where = f"{source}: hooks.{event}"
        if not isinstance(groups, list):
            raise HookConfigError(f"{where}: expected a list of matcher groups")
        if event not in SHARED_EVENTS:
            skipped.append(SkippedHook(source, event, "Sparrow has no such event"))
            continue
        for i, group in enumerate(groups):
            _group(event, group, f"{where}[{i}]", source, specs, skipped)
    return specs, skipped


def _group(
    event: str,
    group: object,
    where: str,
    source: str,
    specs: list[HookSpec],
    skipped: list[SkippedHook],
) -> None:
    if not isinstance(group, dict):
        raise HookConfigError(f"{where}: expected an object")
    matcher = group.get("matcher", "")
    entries = group.get("hooks", [])
    if not isinstance(matcher, str) or not isinstance(entries, list):
        raise HookConfigError(f"{where}: 'matcher' must be a string and 'hooks' a list")
    if event == "SessionStart":
        # Claude's SessionStart matcher names the source; Sparrow only ever starts
        # fresh, so a hook for resume/clear/compact would run at the wrong moment.
        names = {part.strip() for part in matcher.split("|")}
        if matcher.strip() not in ("", "*") and "startup" not in names:
            skipped.append(
                SkippedHook(source, event, f"matcher {matcher!r}: Sparrow sessions only start")
            )
            return
    problem = matcher_error(matcher)
    if problem:
        skipped.append(SkippedHook(source, event, f"matcher {matcher!r}: {problem}"))
        return
    for j, entry in enumerate(entries):
        spec = _entry(event, matcher, entry, f"{where}.hooks[{j}]", source, skipped)
        if spec is not None:
            specs.append(spec)


def _entry(
    event: str, matcher: str, entry: object, where: str, source: str, skipped: list[SkippedHook]
) -> HookSpec | None:
    if not isinstance(entry, dict):
        raise HookConfigError(f"{where}: expected an object")
    kind = entry.get("type", "command")
    if kind != "command":
        skipped.append(SkippedHook(source, event, f"hook type {kind!r} is not supported"))
        return None
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise HookConfigError(f"{where}: 'command' must be a non-empty string")
    timeout = entry.get("timeout")
    if timeout is not None and (
        not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0
    ):
        raise HookConfigError(f"{where}: 'timeout' must be a positive number of seconds")
    return HookSpec(
        event=event,
        command=command,
        matcher=matcher,
        timeout_seconds=None if timeout is None else float(timeout),
        source=source,
    )
