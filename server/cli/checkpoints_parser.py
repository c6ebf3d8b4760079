"""The arguments of ``sparrow checkpoints``, ``rewind`` and ``diff``: a
workspace's checkpoints, going back to one, and what changed since one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def add_checkpoint_commands(sub: Any, lazy: Callable[[str], Any]) -> None:
    checkpoints = sub.add_parser(
        "checkpoints",
        help="list the checkpoints of a workspace or a run (or prune them)",
        description="List checkpoints, newest first: those of --run, else of --workspace "
        "(default: the current folder). `sparrow checkpoints prune` deletes old ones.",
    )
    checkpoints.add_argument("--run", metavar="RUN_ID", help="only the checkpoints of this run")
    checkpoints.add_argument(
        "--workspace", "-w", metavar="DIR", help="the workspace (default: the current folder)"
    )
    checkpoints.add_argument("--json", action="store_true", help="print checkpoints as NDJSON")
    checkpoints.set_defaults(handler=lazy("checkpoints_command"))
    checkpoints_sub = checkpoints.add_subparsers(dest="checkpoints_action", metavar="ACTION")
    prune = checkpoints_sub.add_parser(
        "prune",
        help="delete old checkpoints and free their space",
        description="Delete checkpoints older than --older-than days and beyond the newest "
        "--keep of each workspace; with neither, the limits of the settings.",
    )
    prune.add_argument("--older-than", type=float, metavar="DAYS", help="delete older ones")
    prune.add_argument("--keep", type=int, metavar="N", help="keep the newest N per workspace")
    prune.add_argument(
        "--workspace", "-w", metavar="DIR", help="only this workspace (default: all)"
    )
    prune.set_defaults(handler=lazy("checkpoints_command"))

    rewind = sub.add_parser(
        "rewind",
        help="put a workspace back as a checkpoint had it",
        description="Restore the workspace to a checkpoint (an id, or N: the Nth most "
        "recent, default 1), after showing what will change and asking. A checkpoint of "
        "the present is taken first: rewind to it to undo.",
    )
    rewind.add_argument(
        "checkpoint", nargs="?", default="1", metavar="ID|N", help="a checkpoint id or number"
    )
    rewind.add_argument(
        "--workspace", "-w", metavar="DIR", help="the workspace (default: the current folder)"
    )
    rewind.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    rewind.set_defaults(handler=lazy("checkpoints_command"))

    diff = sub.add_parser(
        "diff",
        help="what changed since a checkpoint",
        description="A unified diff from checkpoint ID to ID2, or to the workspace as it is "
        "now; binary files are named.",
    )
    diff.add_argument(
        "checkpoint", metavar="ID", help="a checkpoint id (see `sparrow checkpoints`)"
    )
    diff.add_argument("to", nargs="?", metavar="ID2", help="a later checkpoint (default: now)")
    diff.set_defaults(handler=lazy("checkpoints_command"))
