"""The end of a run whose process died: what its transcript says last, and the
closing event that makes the transcript end the way the store does.

A dead process's transcript is a prefix of its events (the recorder writes in
order), possibly with a torn last line: the event being written when it died,
which no reader can use. Only the last few lines are read, however long the
transcript."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.core.events import RunFinished

TAIL_BYTES = 256 * 1024


@dataclass(frozen=True)
class TranscriptEnd:
    size: int  # the length of the complete part: a torn line after it is cut
    last_seq: int
    turns: int  # the last turn an event names
    finished: dict[str, Any] | None  # the run_finished event, when it is the last one


def read_end(path: Path) -> TranscriptEnd | None:
    """How ``path`` ends; None when it does not exist."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            start = max(0, size - TAIL_BYTES)
            handle.seek(start)
            data = handle.read()
    except FileNotFoundError:
        return None
    cut = data.rfind(b"\n")
    complete = start + cut + 1 if cut >= 0 else start
    lines = data[: cut + 1].split(b"\n") if cut >= 0 else []
    if start > 0 and lines:
        lines = lines[1:]  # the first may begin before the block
    events: list[dict[str, Any]] = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    last_seq = max((e["seq"] for e in events if isinstance(e.get("seq"), int)), default=0)
    turns = max((e["turn"] for e in events if isinstance(e.get("turn"), int)), default=0)
    last = events[-1] if events else None
    finished = last if last is not None and last.get("type") == RunFinished.type else None
    if finished is not None and isinstance(finished.get("turns"), int):
        turns = finished["turns"]
    return TranscriptEnd(complete, last_seq, turns, finished)


def close_transcript(path: Path, run_id: str, end: TranscriptEnd | None, reason: str) -> None:
    """Cut the torn line of a dead run's transcript and end it with ``run_finished``
    (status interrupted), so that a replay ends where the store says the run did."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as handle:
        if end is not None and handle.tell() > end.size:
            handle.truncate(end.size)
        event = RunFinished(
            run_id=run_id,
            seq=(end.last_seq if end else 0) + 1,
            status="interrupted",
            reason=reason,
            turns=end.turns if end else 0,
        )
        handle.write((event.to_json() + "\n").encode())
        handle.flush()
        os.fsync(handle.fileno())
