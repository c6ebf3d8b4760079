"""The arguments of ``sparrow agent``: list, run, new, edit (parser.py is full)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def add_agent_command(sub: Any, lazy: Callable[[str], Any]) -> None:
    agent = sub.add_parser(
        "agent",
        help="agents defined as files: list, run, new, edit",
        description="Agents defined as files, <config>/agents/NAME.agent.md: YAML front "
        "matter (workspace, model, mode, autonomy, sandbox, schedule, missed, budget) and "
        "the standing instructions. The app's scheduler starts the scheduled ones.",
    )
    actions = agent.add_subparsers(dest="agent_action", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", help="every agent: schedule, next run, last run; invalid files with the reason"
    )
    listing.add_argument("--json", action="store_true", help="one JSON object a line")
    run = actions.add_parser("run", help="run an agent now, in this process, as `sparrow run`")
    run.add_argument("name", metavar="NAME")
    run.add_argument("--json", action="store_true", help="print events as NDJSON instead of text")
    run.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="allow once whatever would ask (otherwise: asked on a terminal, denied off one)",
    )
    new = actions.add_parser("new", help="write a new agent file from a template ($EDITOR)")
    new.add_argument("name", metavar="NAME")
    new.add_argument(
        "--workspace", "-w", metavar="DIR", help="the folder it works in (default: here)"
    )
    edit = actions.add_parser("edit", help="edit an agent file in $EDITOR (else: its path)")
    edit.add_argument("name", metavar="NAME")
    agent.set_defaults(handler=lazy("agent_command"))



