"""``sparrow sessions``: the sessions, newest activity first; ``search``,
``delete`` and ``export`` of them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from server.cli.context import fail, open_state
from server.cli.runs_command import agent_cell
from server.core import formatting
from server.engine.store import SessionInfo, Store
from server.runtime.session_export import export
from server.runtime.sessions import NoSuchSession, SessionRunning, delete_session


def handle(args: argparse.Namespace) -> int:
    action = getattr(args, "action", None) or "list"
    # A session named (delete, export) is taken whatever its age; the list and
    # search show what the age limit keeps.
    paths, store = open_state(retention=action in ("list", "search"))
    try:
        if action == "search":
            return _search(store, args)
        if action == "delete":
            try:
                gone = delete_session(paths, store, args.session_id)
            except (NoSuchSession, SessionRunning) as exc:
                return fail(str(exc))
            print(f"deleted session {args.session_id} ({gone} checkpoints of its own)")
            return 0
        if action == "export":
            return _export(store, args)
        return _list(store, args)
    finally:
        store.close()


def _list(store: Store, args: argparse.Namespace) -> int:
    workspace = str(Path(args.workspace).expanduser().resolve()) if args.workspace else None
    sessions, _ = store.sessions_page(workspace=workspace, limit=max(1, args.limit))
    if args.json:
        for info in sessions:
            print(json.dumps(info.to_dict(), ensure_ascii=False))
        return 0
    if not sessions:
        print("no sessions yet" + (f" in {workspace}" if workspace else ""))
        return 0
    print(f"{'SESSION':<26} {'STATUS':<11} {'AGENT':<12} {'RUNS':>4} {'TOKENS':>9} {'COST':>8}  "
          f"{'ACTIVE':<10}  TITLE / WORKSPACE")
    for info in sessions:
        print(_line(info))
    return 0


def _line(info: SessionInfo) -> str:
    title = info.title if len(info.title) <= 40 else info.title[:39] + "…"
    cost = "-" if info.cost is None else f"${info.cost:.2f}"
    return (
        f"{info.id:<26} {info.status:<11} {agent_cell(info.agent):<12} {info.runs:>4} "
        f"{info.tokens:>9,} {cost:>8}  "
        f"{formatting.age(info.last_run.created_at):<10}  {title}  ({info.workspace})"
    )


def _search(store: Store, args: argparse.Namespace) -> int:
    hits = store.search_sessions(args.term, max(1, args.limit))
    if args.json:
        for hit in hits:
            print(json.dumps(hit.to_dict(), ensure_ascii=False))
        return 0
    if not hits:
        print(f"nothing found for {args.term!r}")
        return 0
    for hit in hits:
        snippet = "".join(
            f"[{s['text']}]" if s["match"] else s["text"] for s in hit.snippet
        ).replace("\n", " ")
        print(f"{hit.session_id}  {hit.run_id}  turn {hit.turn}  {hit.kind}  {hit.title[:50]}")
        print(f"    {snippet}")
    return 0


def _export(store: Store, args: argparse.Namespace) -> int:
    info = store.session_info(args.session_id)
    if info is None:
        return fail(str(NoSuchSession(args.session_id)))
    pieces = export(info, store.session_runs(args.session_id), args.format)
    if args.output is None:
        for piece in pieces:
            sys.stdout.write(piece)
        return 0
    target = Path(args.output).expanduser()
    partial = target.with_name(target.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8") as handle:
            for piece in pieces:
                handle.write(piece)
        partial.replace(target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        return fail(f"cannot write {target}: {exc.strerror or exc}")
    print(f"wrote {target}", file=sys.stderr)
    return 0


