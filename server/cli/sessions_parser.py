"""The arguments of ``sparrow sessions`` and ``sparrow resume``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

Lazy = Callable[[str], Callable[[argparse.Namespace], int]]


def add_session_commands(sub: Any, lazy: Lazy) -> None:
    sessions = sub.add_parser(
        "sessions",
        help="list, search, delete or export sessions (conversations)",
        description="List the sessions, the most recently active first; or search, delete "
        "or export one.",
    )
    sessions.add_argument("--workspace", "-w", metavar="DIR", help="only the sessions of DIR")
    sessions.add_argument("--limit", type=int, default=20, metavar="N", help="how many (20)")
    sessions.add_argument("--json", action="store_true", help="print sessions as NDJSON")
    sessions.set_defaults(handler=lazy("sessions_command"))
    actions = sessions.add_subparsers(dest="action", metavar="ACTION")
    search = actions.add_parser(
        "search", help="full-text search of titles, messages and tool outputs"
    )
    search.add_argument("term", metavar="TERM", help="the words to find (all of them)")
    search.add_argument("--limit", type=int, default=20, metavar="N", help="how many (20)")
    search.add_argument("--json", action="store_true", help="print results as NDJSON")
    delete = actions.add_parser(
        "delete", help="delete a session: transcripts, index, runs, its own checkpoints"
    )
    delete.add_argument("session_id", metavar="ID", help="a session id (see `sparrow sessions`)")
    export = actions.add_parser("export", help="a session as Markdown or JSON")
    export.add_argument("session_id", metavar="ID", help="a session id (see `sparrow sessions`)")
    export.add_argument(
        "--format", choices=("md", "json"), default="md", help="md (default) or json"
    )
    export.add_argument("--output", "-o", metavar="FILE", help="write to FILE (default: stdout)")

    resume = sub.add_parser(
        "resume",
        help="go on with a session: a follow-up with its context",
        description="Send a follow-up to a session: it continues with the whole history, or, "
        "once the session was compacted, starts a new session from its last handoff doc.",
    )
    resume.add_argument("session_id", metavar="SESSION_ID", help="see `sparrow sessions`")
    resume.add_argument("task", help="the follow-up")
    model = resume.add_mutually_exclusive_group()
    model.add_argument("--model", "-m", metavar="MODEL", help="provider:model, or auto")
    model.add_argument("--demo", action="store_true", help="use the built-in scripted demo model")
    model.add_argument("--script", metavar="FILE", help="play a scripted model from a JSON file")
    resume.add_argument("--json", action="store_true", help="print events as NDJSON")
    resume.add_argument(
        "--yes", "-y", action="store_true", help="allow once whatever would ask"
    )
    resume.set_defaults(handler=lazy("resume_command"))
