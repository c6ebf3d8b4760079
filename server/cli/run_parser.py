"""The arguments of the commands about Sparrow's own runs and conversations:
``run``, ``replay``, ``runs``, ``worktrees`` and ``compact``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def add_run_commands(sub: Any, lazy: Callable[[str], Any]) -> None:
    """``run`` and ``replay``."""
    run = sub.add_parser(
        "run", help="run an agent on a workspace", description="Run an agent on a workspace."
    )
    run.add_argument("task", help="what the agent should do (or the follow-up, with --continue)")
    run.add_argument(
        "--workspace",
        "-w",
        metavar="DIR",
        help="the folder to work in (with --continue: the conversation's own)",
    )
    run.add_argument(
        "--continue",
        dest="continue_from",
        metavar="RUN_ID",
        help="continue the conversation of this run, with its whole history",
    )
    run.add_argument(
        "--from-handoff",
        dest="handoff",
        metavar="FILE",
        help="start a new conversation from a handoff doc (sparrow compact writes them)",
    )
    run.add_argument(
        "--attach",
        action="append",
        default=[],
        metavar="PATH",
        help="send a file or folder with the task (repeatable): text inlined, an image as "
        "an image, a folder as a listing",
    )
    model = run.add_mutually_exclusive_group()
    model.add_argument(
        "--model",
        "-m",
        metavar="MODEL",
        help="provider:model (e.g. anthropic:claude-sonnet-4-6, ollama:qwen3:8b), or auto "
        "to route by the task (default: the conversation's model, else auto; see "
        "`sparrow models`)",
    )
    model.add_argument("--demo", action="store_true", help="use the built-in scripted demo model")
    model.add_argument("--script", metavar="FILE", help="play a scripted model from a JSON file")
    run.add_argument("--json", action="store_true", help="print events as NDJSON instead of text")
    run.add_argument(
        "--mode",
        metavar="MODE",
        help="this run's permission mode: read-only, plan, supervised, trusted, autonomous "
        "(default: the shared one, see `sparrow autonomy`)",
    )
    run.add_argument(
        "--autonomy", type=float, metavar="LEVEL", help="this run's autonomy level, 0.0 to 1.0"
    )
    run.add_argument(
        "--sandbox",
        metavar="NAME",
        help="local, local-hardened or worktree (default: the settings' permissions.sandbox)",
    )
    run.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="allow once whatever would ask (otherwise: asked on a terminal, denied off one)",
    )
    run.set_defaults(handler=lazy("run_command"))

    replay = sub.add_parser(
        "replay",
        help="print a recorded conversation again from its transcripts",
        description="Print a recorded run again from its transcript, after the earlier "
        "runs of its conversation.",
    )
    replay.add_argument(
        "run_id", metavar="RUN_ID", help="a run id (see `sparrow runs`) or a transcript file"
    )
    replay.add_argument(
        "--json", action="store_true", help="print events as NDJSON instead of text"
    )
    replay.add_argument(
        "--run-only",
        action="store_true",
        help="only this run, without the earlier runs of its conversation",
    )
    replay.add_argument(
        "--request",
        type=int,
        metavar="TURN",
        help="what the run sent to the model in this turn (system prompt, tools, messages)",
    )
    replay.add_argument(
        "--speed",
        type=float,
        default=0.0,
        metavar="X",
        help="replay with the recorded timing, X times as fast (0, the default: at once)",
    )
    replay.set_defaults(handler=lazy("replay_command"))


def add_runs_commands(sub: Any, lazy: Callable[[str], Any]) -> None:
    """``runs`` and ``worktrees``: the runs made, and the worktrees they left."""
    runs = sub.add_parser(
        "runs", help="list recent runs", description="List recent runs, newest first."
    )
    runs.add_argument("--limit", type=int, default=20, metavar="N", help="how many (default 20)")
    runs.add_argument("--json", action="store_true", help="print runs as NDJSON")
    runs.set_defaults(handler=lazy("runs_command"))

    worktrees = sub.add_parser(
        "worktrees",
        help="the git worktrees of 'worktree' sandbox runs (or prune them)",
        description="List the worktrees that runs with the sandbox 'worktree' left for review: "
        "their branch, commits and uncommitted changes, and how to merge or drop each. "
        "`sparrow worktrees prune` removes those of finished runs.",
    )
    worktrees.add_argument("--json", action="store_true", help="print worktrees as NDJSON")
    worktrees.set_defaults(handler=lazy("worktrees_command"))
    worktrees_actions = worktrees.add_subparsers(dest="worktrees_action", metavar="ACTION")
    pruning = worktrees_actions.add_parser(
        "prune",
        help="remove the worktrees of finished runs",
        description="Remove the worktrees of finished runs, and their branches when nothing "
        "was committed on them. A worktree with uncommitted changes (the run's work) and a "
        "branch with commits are kept unless --force.",
    )
    pruning.add_argument("--run", metavar="RUN_ID", help="only the worktree of this run")
    pruning.add_argument(
        "--force", action="store_true", help="drop uncommitted work and unmerged branches too"
    )
    pruning.set_defaults(handler=lazy("worktrees_command"))


def add_compact_command(sub: Any, lazy: Callable[[str], Any]) -> None:
    compact = sub.add_parser(
        "compact",
        help="write a handoff doc of a conversation (.sparrow/handoff/<timestamp>.md)",
        description="Distil a conversation into a handoff doc: its task, the files modified, "
        "decisions, tests run, blockers and next steps. The conversation is that of --run, "
        "else that of the latest run on --workspace (default: the current folder); or, with "
        "--session, a Claude Code or Codex session the monitor watches. The doc goes to "
        "<workspace>/.sparrow/handoff/<timestamp>.md (a session's: its own folder), or --out; "
        "its path is printed.",
    )
    compact.add_argument(
        "--task", metavar="TEXT", help="what the work is (default: 'ad-hoc handoff')"
    )
    compact.add_argument("--out", metavar="PATH", help="write the doc here instead")
    compact.add_argument(
        "--json",
        action="store_true",
        help="print the doc as JSON, with its path (the Markdown is written all the same)",
    )
    compact.add_argument(
        "--workspace", "-w", metavar="DIR", help="the workspace (default: the current folder)"
    )
    compact.add_argument(
        "--run", metavar="RUN_ID", help="this run's conversation (default: the latest run's)"
    )
    compact.add_argument(
        "--session",
        metavar="ID",
        help="a Claude Code or Codex session instead: its key or session id as "
        "`sparrow monitor --json` shows them, or its transcript's path",
    )
    compact.set_defaults(handler=lazy("compact_command"))
