"""``sparrow agent``: the agents defined as files. ``list`` shows each with its
schedule and next and last run, and every invalid file with its reason; ``run``
runs one now, here, printed as ``sparrow run`` prints; ``new`` and ``edit``
open the file in $EDITOR on a terminal, and say its path otherwise."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import anyio

from server.cli.context import fail, open_state
from server.cli.render import HumanRenderer, JsonRenderer
from server.cli.run_command import Renderer, follow_run
from server.cli.tty_approver import NotInteractive, TtyApprover, choose_approver
from server.core.formatting import age
from server.engine.agents import AgentFileError, AgentFolder
from server.engine.bus import EventBus
from server.engine.store import RunInfo
from server.runtime.agents import AgentStatus
from server.runtime.runs import RunManager


def handle(args: argparse.Namespace) -> int:
    action = args.agent_action
    try:
        if action == "list":
            return _list(args.json)
        if action == "run":
            return _run(args)
        if action == "new":
            return _new(args.name, args.workspace)
        return _edit(args.name)
    except AgentFileError as exc:
        return fail(str(exc), 2)


def _when(moment: float | None, now: float) -> str:
    if moment is None:
        return "by hand"
    local = time.localtime(moment)
    if moment - now < 86400:
        return time.strftime("%H:%M", local)
    return time.strftime("%Y-%m-%d %H:%M", local)


def _last(status: AgentStatus) -> str:
    last = status.last_run
    return "never" if last is None else f"{last.status} {age(last.created_at)}"


def _list(as_json: bool) -> int:
    paths, store = open_state()
    try:
        # A manager that never enters: its agents only read the files and the store.
        runs = RunManager(paths=paths, store=store, bus=EventBus())
        statuses, invalid = runs.agents.statuses()
    finally:
        store.close()
    if as_json:
        for status in statuses:
            print(json.dumps({"valid": True} | status.to_dict(), ensure_ascii=False))
        for bad in invalid:
            print(json.dumps({"valid": False} | bad.to_dict(), ensure_ascii=False))
        return 0
    if not statuses and not invalid:
        print(f"no agents: write one with `sparrow agent new NAME` (in {paths.agents})")
        return 0
    if statuses:
        now = time.time()
        print(f"{'NAME':<20} {'SCHEDULE':<16} {'NEXT RUN':<16} {'MODEL':<14} {'LAST RUN':<22} "
              "WORKSPACE")
        for status in statuses:
            agent = status.agent
            print(
                f"{agent.name:<20} {agent.schedule or '-':<16} "
                f"{_when(status.next_run, now):<16} {agent.model or 'default':<14} "
                f"{_last(status):<22} {agent.workspace}"
            )
    for bad in invalid:
        print(f"invalid: {bad.name}: {bad.reason} ({bad.path})")
    return 0


def _run(args: argparse.Namespace) -> int:
    approver = choose_approver(yes=args.yes)
    renderer: Renderer = (
        JsonRenderer()
        if args.json
        else HumanRenderer(show_questions=not isinstance(approver, TtyApprover))
    )
    name = args.name

    def start(runs: RunManager) -> RunInfo:
        return runs.agents.start(name, surface="cli", approver=approver)

    code = anyio.run(follow_run, start, renderer)
    hint = approver.hint() if isinstance(approver, NotInteractive) else None
    if hint is not None:
        print(hint, file=sys.stderr)
    return code


def _folder() -> AgentFolder:
    paths, store = open_state()
    store.close()
    return AgentFolder(paths.agents)


def _new(name: str, workspace: str | None) -> int:
    folder = Path(workspace or ".").expanduser().resolve()
    try:
        path = _folder().create(name, str(folder))
    except FileExistsError:
        return fail(f"the agent {name!r} exists: `sparrow agent edit {name}`", 2)
    print(f"wrote {path}")
    return _open_in_editor(_folder(), name, path)


def _edit(name: str) -> int:
    folder = _folder()
    path = folder.path_of(name)
    if not path.exists():
        return fail(f"no agent {name!r}: there is no {path} (`sparrow agent new {name}`)", 2)
    return _open_in_editor(folder, name, path)


def _open_in_editor(folder: AgentFolder, name: str, path: Path) -> int:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor or not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(f"edit it in your editor: {path}")
        return 0
    code = subprocess.call([*shlex.split(editor), str(path)])
    if code != 0:
        return fail(f"the editor exited {code}")
    try:
        agent = folder.load(path)
    except AgentFileError as exc:
        return fail(f"{path.name} is not valid yet: {exc}")
    when = f"scheduled {agent.schedule}" if agent.schedule else "run by hand"
    print(f"saved {agent.name}: valid, {when}")
    return 0
