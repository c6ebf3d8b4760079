"""``sparrow compact``: a handoff doc of a conversation, written to
``<workspace>/.sparrow/handoff/<timestamp>.md`` (or ``--out``): that of
``--run``, else of the latest run on the workspace; with no run at all, an
empty doc with its task. With ``--session``, that of a Claude Code or Codex
session, in its own folder. The engine distils it; this only finds the
transcripts and says where the doc went."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from server.cli.context import fail, open_state
from server.core.redaction import redact
from server.engine.handoff import conversation_texts, distill, write_handoff
from server.engine.store import RunInfo
from server.engine.transcript import BadLine, read_transcript


def _conversation(args: argparse.Namespace) -> tuple[Path, list[RunInfo]] | str:
    """The workspace and the runs of the conversation, oldest first; or what is wrong."""
    asked = Path(args.workspace).expanduser().resolve() if args.workspace else None
    # A run named is read whatever its age (the age limit would delete it first).
    _, store = open_state(retention=not args.run)
    try:
        if args.run:
            info = store.get_run(args.run)
            if info is None:
                return f"no run {args.run!r}; `sparrow runs` lists the recent ones"
            if asked is not None and asked != Path(info.workspace):
                return (
                    f"run {args.run} worked in {info.workspace}, not {asked} "
                    "(leave out --workspace, or write elsewhere with --out PATH)"
                )
            return Path(info.workspace), store.session_runs(info.session_id)
        workspace = asked or Path.cwd().resolve()
        latest = store.latest_run_on(str(workspace))
        return workspace, store.session_runs(latest.session_id) if latest else []
    finally:
        store.close()


def _texts(runs: list[RunInfo]) -> list[str] | str:
    texts: list[str] = []
    for run in runs:
        path = Path(run.transcript)
        if not path.is_file():
            return f"the transcript of {run.id} is missing: {path}"
        events = []
        for item in read_transcript(path):
            if isinstance(item, BadLine):
                # One bad line costs its event, not the whole handoff.
                print(
                    f"sparrow: {path.name} line {item.number} skipped: {item.problem}",
                    file=sys.stderr,
                )
                continue
            events.append(item)
        texts += conversation_texts(events)
    return texts


def handle(args: argparse.Namespace) -> int:
    if args.session:
        return _session(args)
    found = _conversation(args)
    if isinstance(found, str):
        return fail(found)
    workspace, runs = found
    texts = _texts(runs)
    if isinstance(texts, str):
        return fail(texts)
    doc = distill(texts, task=redact(args.task or ""))
    out = Path(args.out).expanduser().absolute() if args.out else None
    if out is None and not workspace.is_dir():
        return fail(f"workspace not found: {workspace} (write elsewhere with --out PATH)")
    try:
        path = write_handoff(doc, workspace, out)
    except OSError as exc:
        return fail(f"the handoff doc could not be written: {exc}")
    if args.json:
        print(json.dumps({**doc.to_dict(), "path": str(path)}, ensure_ascii=False))
    else:
        print(path)
    return 0


def _session(args: argparse.Namespace) -> int:
    from server.core.paths import resolve_paths
    from server.core.settings import SettingsError, load_settings
    from server.monitor.discovery import session_roots
    from server.monitor.handoff_source import find_session
    from server.monitor.levels import MonitorConfig
    from server.monitor.windows import state_lookup
    from server.runtime.session_handoff import SessionHandoffError, session_doc, write_session_doc

    if args.run or args.workspace:
        return fail("--session names the conversation: leave out --run and --workspace")
    try:
        paths = resolve_paths()
        settings = load_settings(paths.config_file).monitor
        config = MonitorConfig.from_settings(settings, lookup=state_lookup(paths.state))
    except (SettingsError, ValueError) as exc:
        return fail(str(exc))
    roots = session_roots()
    found = find_session(args.session, roots)
    if found is None:
        places = ", ".join(root.path for root in roots)
        return fail(
            f"no Claude Code or Codex session {args.session!r} (looked for a transcript by "
            f"that path, or by that session id in {places}); `sparrow monitor --json` lists them"
        )
    try:
        doc, work = session_doc(
            found.path, found.tool, config, task=redact(args.task or ""), subagent=found.subagent
        )
        out = Path(args.out).expanduser().absolute() if args.out else None
        path = write_session_doc(doc, work, out)
    except OSError as exc:
        return fail(f"the transcript could not be read: {exc}")
    except SessionHandoffError as exc:
        hint = " with --out PATH" if not args.out else ""
        return fail(f"{exc}{hint}")
    if args.json:
        print(json.dumps({**doc.to_dict(), "path": str(path)}, ensure_ascii=False))
    else:
        print(path)
    return 0
