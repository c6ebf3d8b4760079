"""Hooks: the user's shell commands run on the agent loop's events (docs/hooks.md)."""

from server.engine.hooks.claude import SkippedHook, load_claude_hooks, parse_claude_hooks
from server.engine.hooks.runner import HookOutcome, HookRun, HookSet, load_hooks

__all__ = [
    "HookOutcome",
    "HookRun",
    "HookSet",
    "SkippedHook",
    "load_claude_hooks",
    "load_hooks",
    "parse_claude_hooks",
]
