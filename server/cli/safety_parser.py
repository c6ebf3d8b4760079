"""The arguments of ``sparrow permissions`` and ``sparrow autonomy``: the rules
that allow, ask or deny tool calls, and the shared mode and level."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def add_safety_commands(sub: Any, lazy: Callable[[str], Any]) -> None:
    permissions = sub.add_parser(
        "permissions",
        help="list, add, remove or import permission rules",
        description="The rules that allow, ask or deny tool calls. A rule is `tool` or "
        "`tool(pattern)`, e.g. write_file(src/**), run_shell(npm test:*), "
        "fetch_url(domain:example.com); Claude Code's names (Bash, Edit, Read...) work too.",
    )
    actions = permissions.add_subparsers(dest="permissions_action", metavar="ACTION", required=True)
    workspace_help = "the workspace (default: the current folder)"
    listing = actions.add_parser(
        "list",
        help="the defaults, the global rules and the workspace's rules",
        description="List the protected-path defaults, the global rules and the rules of "
        "--workspace (default: the current folder).",
    )
    listing.add_argument("--workspace", "-w", metavar="DIR", help=workspace_help)
    listing.add_argument("--json", action="store_true", help="print rules as NDJSON")
    for effect in ("allow", "ask", "deny"):
        add = actions.add_parser(
            effect,
            help=f"add a rule: {effect} calls matching SPEC",
            description=f"Save a rule that {effect}s the calls matching SPEC, for the "
            "workspace (default) or everywhere.",
        )
        add.add_argument("spec", metavar="SPEC", help="e.g. write_file(src/**) or Bash(ls:*)")
        add.add_argument(
            "--scope",
            choices=("workspace", "global"),
            default="workspace",
            help="where the rule applies (default: workspace)",
        )
        add.add_argument("--workspace", "-w", metavar="DIR", help=workspace_help)
        add.add_argument("--provider", metavar="NAME", help="only for this model provider")
        add.add_argument("--surface", metavar="NAME", help="only for runs from this surface")
    remove = actions.add_parser(
        "remove", help="remove a rule", description="Remove a rule by its id."
    )
    remove.add_argument("rule_id", metavar="ID", help="see `sparrow permissions list`")
    imported = actions.add_parser(
        "import",
        help="import Claude Code's permission rules",
        description="Save the permissions of the workspace's .claude/settings.json and "
        ".claude/settings.local.json as rules of that workspace.",
    )
    imported.add_argument("--workspace", "-w", metavar="DIR", help=workspace_help)
    permissions.set_defaults(handler=lazy("permissions_command"))

    autonomy = sub.add_parser(
        "autonomy",
        help="show or set the permission mode and the autonomy level",
        description="Without arguments, show the shared mode, level and band. With LEVEL "
        "and/or --mode, set them: the desktop app and its runs follow at their next call.",
    )
    autonomy.add_argument(
        "level", nargs="?", type=float, metavar="LEVEL", help="the autonomy level, 0.0 to 1.0"
    )
    autonomy.add_argument(
        "--mode",
        metavar="MODE",
        help="read-only, plan, supervised, trusted, autonomous or emergency-stop",
    )
    autonomy.add_argument("--json", action="store_true", help="print the result as JSON")
    autonomy.set_defaults(handler=lazy("autonomy_command"))
