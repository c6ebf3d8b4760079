"""How events read in a terminal: the one human renderer shared by ``run`` and
``replay``, and the NDJSON one."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from server.core.events import Event, RunFinished, RunStarted, TextDelta, ToolRequested, ToolResult

FOLD_LINES = 8
ARG_PREVIEW = 70


def _preview(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    first = text.splitlines()[0] if text else ""
    more = len(text) > len(first) or len(first) > ARG_PREVIEW
    return (first[:ARG_PREVIEW] + "…") if more else first


class JsonRenderer:
    def __init__(self, out: TextIO = sys.stdout) -> None:
        self.out = out

    def __call__(self, event: Event) -> None:
        self.out.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
        self.out.flush()


class HumanRenderer:
    def __init__(self, out: TextIO = sys.stdout) -> None:
        self.out = out
        self._in_text = False

    def _line(self, text: str) -> None:
        if self._in_text:
            self.out.write("\n")
            self._in_text = False
        self.out.write(text + "\n")

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._line(f"run {event.run_id} · model {event.model} · {event.workspace}")
            self._line(f"task: {event.task}\n")
        elif isinstance(event, TextDelta):
            self.out.write(event.text)
            self._in_text = True
        elif isinstance(event, ToolRequested):
            args = "  ".join(f"{k}={_preview(v)}" for k, v in event.args.items())
            self._line(f"  ▸ {event.tool} [{event.risk}]  {args}")
        elif isinstance(event, ToolResult):
            mark = "✓" if event.ok else "✗"
            lines = event.output.splitlines() or [""]
            shown = lines[:FOLD_LINES]
            self._line(f"    {mark} {shown[0]}")
            for line in shown[1:]:
                self._line(f"      {line}")
            if len(lines) > FOLD_LINES:
                self._line(f"      … {len(lines) - FOLD_LINES} more lines")
        elif isinstance(event, RunFinished):
            self._line(f"\n● {event.status}: {event.reason} ({event.turns} turns)")
        self.out.flush()
