"""The arguments of ``sparrow memory``: the facts, USER.md and MEMORY.md."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def add_memory_command(sub: Any, lazy: Callable[[str], Any]) -> None:
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
    memory.set_defaults(handler=lazy("memory_command"))
