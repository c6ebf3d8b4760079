"""The argument parser of ``sparrow``; handlers are imported when called."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from server.cli.agent_parser import add_agent_command
from server.cli.sessions_parser import add_session_commands

DESCRIPTION = "Sparrow: a local-first agent cockpit. Run coding agents on your own folders."


def _lazy(module: str) -> Any:
    def handler(args: argparse.Namespace) -> int:
        result: int = importlib.import_module(f"server.cli.{module}").handle(args)
        return result

    return handler


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sparrow", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version="sparrow 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

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
    run.set_defaults(handler=_lazy("run_command"))

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
    replay.set_defaults(handler=_lazy("replay_command"))

    models = sub.add_parser(
        "models",
        help="the models you can use: providers, keys, the default and the routes",
        description="List the providers (with their key state and what they answer), the "
        "models they offer, the default model and the routes.",
    )
    models.add_argument("--json", action="store_true", help="print it as one JSON object")
    models.set_defaults(handler=_lazy("models_command"))

    keys = sub.add_parser(
        "keys",
        help="API keys of the model providers, in the OS keyring",
        description="Set, list or remove the API keys of model providers. Keys live in the "
        "OS keyring only (service 'sparrow'); the environment variables work as a fallback.",
    )
    keys_sub = keys.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    key_set = keys_sub.add_parser(
        "set",
        help="store a key (read without echo, or from stdin when not a terminal)",
        description="Store a provider's key in the OS keyring. On a terminal it is read "
        "without echo; otherwise from stdin.",
    )
    key_set.add_argument("provider", metavar="PROVIDER", help="anthropic, openai, openrouter, …")
    key_list = keys_sub.add_parser("list", help="every provider's key state (masked)")
    key_list.add_argument("--json", action="store_true", help="one JSON object per provider")
    key_remove = keys_sub.add_parser("remove", help="remove a provider's key from the keyring")
    key_remove.add_argument("provider", metavar="PROVIDER")
    for each in (key_set, key_list, key_remove):
        each.set_defaults(handler=_lazy("keys_command"))

    runs = sub.add_parser(
        "runs", help="list recent runs", description="List recent runs, newest first."
    )
    runs.add_argument("--limit", type=int, default=20, metavar="N", help="how many (default 20)")
    runs.add_argument("--json", action="store_true", help="print runs as NDJSON")
    runs.set_defaults(handler=_lazy("runs_command"))

    worktrees = sub.add_parser(
        "worktrees",
        help="the git worktrees of 'worktree' sandbox runs (or prune them)",
        description="List the worktrees that runs with the sandbox 'worktree' left for review: "
        "their branch, commits and uncommitted changes, and how to merge or drop each. "
        "`sparrow worktrees prune` removes those of finished runs.",
    )
    worktrees.add_argument("--json", action="store_true", help="print worktrees as NDJSON")
    worktrees.set_defaults(handler=_lazy("worktrees_command"))
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
    pruning.set_defaults(handler=_lazy("worktrees_command"))

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
    monitor.set_defaults(handler=_lazy("monitor_command"))

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
    claude.set_defaults(handler=_lazy("hook_command"))
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
    install.set_defaults(handler=_lazy("hook_command"))

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
    checkpoints.set_defaults(handler=_lazy("checkpoints_command"))
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
    prune.set_defaults(handler=_lazy("checkpoints_command"))

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
    rewind.set_defaults(handler=_lazy("checkpoints_command"))

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
    diff.set_defaults(handler=_lazy("checkpoints_command"))
    _add_safety_commands(sub)
    _add_compact_command(sub)
    _add_memory_command(sub)
    add_agent_command(sub, _lazy)
    add_session_commands(sub, _lazy)
    return parser


def _add_memory_command(sub: Any) -> None:
    memory = sub.add_parser(
        "memory",
        help="the agent's memory: facts, USER.md and MEMORY.md",
        description="Facts (short key: value notes, global or of a workspace) and two bounded "
        "docs, USER.md (about you, 1,400 characters) and MEMORY.md (a workspace's notes, "
        "2,200 characters), shown to every run as information. Every write passes the "
        "memory guards; a rejection exits 1 with its reason.",
    )
    actions = memory.add_subparsers(dest="memory_action", metavar="ACTION", required=True)
    workspace_help = "only the facts this workspace sees (its own and the global ones)"
    listing = actions.add_parser("list", help="the facts, the most recent first")
    listing.add_argument("--workspace", "-w", metavar="DIR", help=workspace_help)
    listing.add_argument("--json", action="store_true", help="print facts as NDJSON")
    add = actions.add_parser(
        "add",
        help="save a fact (the same key in the same scope is replaced)",
        description="Save KEY: VALUE, global unless --workspace. The same key in the same "
        "scope is replaced.",
    )
    add.add_argument("key", metavar="KEY", help="a short name, one line (100 characters)")
    add.add_argument("value", metavar="VALUE", help="the note (1,000 characters)")
    add.add_argument("--workspace", "-w", metavar="DIR", help="a fact of this workspace only")
    search = actions.add_parser(
        "search",
        help="full-text search of the facts, the best match first",
        description="Facts whose key or value holds every word of TERM (the last one as a "
        "prefix; accents ignored), the best match first.",
    )
    search.add_argument("term", metavar="TERM")
    search.add_argument("--workspace", "-w", metavar="DIR", help=workspace_help)
    search.add_argument("--json", action="store_true", help="print facts as NDJSON")
    forget = actions.add_parser(
        "forget",
        help="remove a fact by its id or its key",
        description="Remove a fact: by its id, or by its key (a global fact, or with "
        "--workspace that workspace's).",
    )
    forget.add_argument("fact", metavar="ID|KEY")
    forget.add_argument("--workspace", "-w", metavar="DIR", help="a fact of this workspace")
    docs = actions.add_parser(
        "docs",
        help="show USER.md and MEMORY.md with their sizes and limits, or change one",
        description="Show USER.md and the MEMORY.md of --workspace (default: the current "
        "folder), with their sizes and limits. --edit opens one in $EDITOR; --set replaces "
        "one with a file's text (- for stdin). Both pass the memory guards.",
    )
    docs.add_argument("--workspace", "-w", metavar="DIR", help="MEMORY.md's workspace")
    change = docs.add_mutually_exclusive_group()
    change.add_argument("--edit", choices=("user", "memory"), help="edit a doc in $EDITOR")
    change.add_argument(
        "--set", nargs=2, metavar=("DOC", "FILE"), help="replace user|memory with FILE (- stdin)"
    )
    docs.add_argument("--json", action="store_true", help="print both docs as one JSON object")
    memory.set_defaults(handler=_lazy("memory_command"))


def _add_compact_command(sub: Any) -> None:
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
    compact.set_defaults(handler=_lazy("compact_command"))


def _add_safety_commands(sub: Any) -> None:
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
    permissions.set_defaults(handler=_lazy("permissions_command"))

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
    autonomy.set_defaults(handler=_lazy("autonomy_command"))
