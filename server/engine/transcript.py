"""Transcripts: each run's events as JSON lines in ``<state>/transcripts/<run-id>.jsonl``.

The recorder writes every event as it is published and flushes at every event
but a streamed delta: the line of a tool request is on disk before the tool changes
the workspace, and a crash can lose at most the tail of the text being
streamed. Reading is forgiving: a malformed line (a crash mid-write, a hand
edit) is reported with its number and skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from server.core.events import Event, EventDecodeError, StreamDelta, event_from_dict


class TranscriptRecorder:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._handle: IO[str] | None = path.open("a", encoding="utf-8")

    def __call__(self, event: Event) -> None:
        if self._handle is None:
            return
        self._handle.write(event.to_json() + "\n")
        if not isinstance(event, StreamDelta):
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


@dataclass(frozen=True)
class BadLine:
    number: int
    problem: str


def read_transcript(path: Path) -> Iterator[Event | BadLine]:
    """The events of a transcript in order, with a BadLine for each unreadable line."""
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield event_from_dict(json.loads(line))
            except json.JSONDecodeError as exc:
                yield BadLine(number, f"not valid JSON ({exc.msg})")
            except EventDecodeError as exc:
                yield BadLine(number, str(exc))
