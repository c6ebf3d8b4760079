"""The arguments of ``sparrow monitor`` and ``sparrow hook``: watching the
context of other tools' agents (Claude Code, Codex), and warning them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def add_monitor_commands(sub: Any, lazy: Callable[[str], Any]) -> None:
    monitor = sub.add_parser(
        "monitor",
        help="live context meters of Claude Code and Codex sessions",
        description="Show the context of every live Claude Code and Codex session, "
        "most urgent first, refreshing until Ctrl-C.",
    )
    monitor.add_argument("--once", action="store_true", help="print the sessions once and exit")
    monitor.add_argument(
        "--json", action="store_true", help="print sessions (or, live, updates) as NDJSON"
    )
    monitor.add_argument(
        "--interval", type=float, metavar="SECONDS", help="refresh period (default: settings)"
    )
    monitor.set_defaults(handler=lazy("monitor_command"))

    hook = sub.add_parser(
        "hook",
        help="warn Claude Code agents before their context runs out",
        description="Claude Code's PostToolUse hook, and its installation.",
    )
    hook_sub = hook.add_subparsers(dest="hook_action", metavar="ACTION", required=True)
    claude = hook_sub.add_parser(
        "claude-code",
        help="run as Claude Code's hook: the hook's JSON on stdin; always exits 0",
        description="Read a Claude Code hook call on stdin and, after a tool call at or "
        "above a context level, tell the agent (additionalContext). Always exits 0.",
    )
    claude.set_defaults(handler=lazy("hook_command"))
    install = hook_sub.add_parser(
        "install",
        help="add the hook to Claude Code's settings",
        description="Add `sparrow hook claude-code` as a PostToolUse hook to Claude Code's "
        "settings (~/.claude/settings.json, or DIR/.claude/settings.json), after a backup.",
    )
    install.add_argument("--project", metavar="DIR", help="a project's settings instead")
    install.add_argument(
        "--uninstall", action="store_true", help="remove exactly what install added"
    )
    install.set_defaults(handler=lazy("hook_command"))
