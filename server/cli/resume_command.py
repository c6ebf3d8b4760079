"""``sparrow resume SESSION_ID "follow-up"``: go on with a session, from its
whole history, or from its last handoff doc once it was compacted (then as a
new session, its child)."""

from __future__ import annotations

import argparse
from pathlib import Path

from server.cli.context import fail, open_state
from server.cli.run_command import run_in_terminal
from server.providers.scripted import ScriptedProvider, ScriptError, load_script
from server.runtime.runs import RunRequestError
from server.runtime.sessions import NoSuchSession, resume_request


def handle(args: argparse.Namespace) -> int:
    # follow_run applies the age limit once the follow-up exists: not before, when
    # it would delete the very session resumed here.
    _, store = open_state(retention=False)
    try:
        request = resume_request(store, args.session_id, args.task)
    except (NoSuchSession, RunRequestError) as exc:
        return fail(str(exc), 2)
    finally:
        store.close()
    request.model = "demo" if args.demo else args.model
    if args.script:
        try:
            turns = load_script(Path(args.script))
        except ScriptError as exc:
            return fail(str(exc), 2)
        request.provider = ScriptedProvider(turns, name="script")
    return run_in_terminal(request, json_out=args.json, yes=args.yes)
