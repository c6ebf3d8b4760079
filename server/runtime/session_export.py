"""A session exported as Markdown (to read) or JSON (its rows and every event
of its transcripts). Both are made as a stream of pieces, one transcript line
at a time: a long session is never held whole."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from server.core.events import Compacted, Event, MessageAdded, RunFinished, ToolResult
from server.engine.store import RunInfo, SessionInfo
from server.engine.transcript import BadLine, read_transcript

FORMATS = ("md", "json")


def export(info: SessionInfo, runs: list[RunInfo], fmt: str) -> Iterator[str]:
    if fmt == "json":
        return as_json(info, runs)
    if fmt == "md":
        return as_markdown(info, runs)
    raise ValueError(f"unknown export format {fmt!r}: md or json")


def _events(run: RunInfo) -> Iterator[Event]:
    path = Path(run.transcript)
    if path.is_file():
        for item in read_transcript(path):
            if not isinstance(item, BadLine):
                yield item


def as_json(info: SessionInfo, runs: list[RunInfo]) -> Iterator[str]:
    yield '{"session": ' + json.dumps(info.to_dict(), ensure_ascii=False) + ', "runs": ['
    for number, run in enumerate(runs):
        yield ("," if number else "") + '{"run": ' + json.dumps(run.to_dict(), ensure_ascii=False)
        yield ', "events": ['
        for index, event in enumerate(_events(run)):
            yield ("," if index else "") + "\n" + event.to_json()
        yield "]}"
    yield "]}\n"


def _when(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def _fenced(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip()}\n{fence}\n\n"


def as_markdown(info: SessionInfo, runs: list[RunInfo]) -> Iterator[str]:
    cost = "unknown" if info.cost is None else f"${info.cost:.4f}"
    yield f"# {info.title or info.id}\n\n"
    yield (
        f"- Session: `{info.id}`\n- Workspace: `{info.workspace}`\n"
        f"- Models: {', '.join(info.models) or '-'}\n- Status: {info.status}\n"
        f"- Tokens: {info.tokens:,}\n- Cost: {cost}\n"
        f"- Started: {_when(info.created_at)}\n- Ended: {_when(info.ended_at)}\n"
    )
    if info.parent:
        yield f"- Resumed from: `{info.parent}`\n"
    for run in runs:
        yield f"\n## Run `{run.id}` · {run.model} · {run.status}\n\n"
        for event in _events(run):
            yield from _markdown_of(event)


def _markdown_of(event: Event) -> Iterator[str]:
    if isinstance(event, MessageAdded):
        message: dict[str, Any] = event.message
        role, text = message.get("role"), message.get("text")
        if role in ("user", "assistant") and (text or message.get("tool_calls")):
            yield f"### {'User' if role == 'user' else 'Assistant'}\n\n"
            if isinstance(text, str) and text.strip():
                yield text.rstrip() + "\n\n"
            for call in message.get("tool_calls") or []:
                args = json.dumps(call.get("args"), ensure_ascii=False)
                yield f"Calls `{call.get('name')}` with `{args}`\n\n"
    elif isinstance(event, ToolResult):
        yield f"**`{event.tool}`** {'output' if event.ok else 'failed'}:\n\n"
        yield _fenced(event.output)
    elif isinstance(event, Compacted):
        yield f"*Compacted ({event.reason or 'asked'}):* {event.summary.strip()}\n\n"
    elif isinstance(event, RunFinished):
        yield f"*Run {event.status}{': ' + event.reason if event.reason else ''}*\n"
