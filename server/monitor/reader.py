"""One transcript file followed over time: a tail cursor, a format parser and
the session's state. ``refresh()`` reads what changed; ``read_transcript`` is
the one-shot form the hook uses."""

from __future__ import annotations

import json
import os
from typing import Any

from server.monitor.claude_code import ClaudeCodeParser
from server.monitor.codex import CodexParser
from server.monitor.state import CLAUDE_CODE, MAX_SAMPLES, SessionState
from server.monitor.tail import GROWN, MISSING, RESET, SAME, Tail

Parser = ClaudeCodeParser | CodexParser

# On a first read, once the current figures are found, keep reading back a little
# for the trend line (the watcher only; the hook stops at the figures).
HISTORY_LINES = MAX_SAMPLES * 3  # streamed responses take several lines each
HISTORY_BYTES = 256 * 1024
HEAD_BYTES = 256 * 1024

# What ``refresh`` reports.
UNCHANGED = SAME
UPDATED = GROWN
REREAD = RESET
GONE = MISSING
UNREADABLE = "unreadable"  # there, but cannot be opened (permissions)


def load_line(raw: bytes) -> dict[str, Any] | None:
    """One JSONL line as an object, or None when it is not a JSON object."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def make_parser(state: SessionState, subagent: bool = False) -> Parser:
    if state.tool == CLAUDE_CODE:
        return ClaudeCodeParser(state, subagent)
    return CodexParser(state, subagent)


class _Backward:
    """The visitor of a backward scan: keeps the lines that matter, newest first,
    until the parser has its figures (and, with ``history``, a few more)."""

    __slots__ = ("history", "items", "parser", "scanned")

    def __init__(self, parser: Parser, history: bool) -> None:
        self.parser = parser
        self.history = history
        self.items: list[dict[str, Any]] = []
        self.scanned = 0

    def __call__(self, raw: bytes) -> bool:
        self.scanned += len(raw) + 1
        parser = self.parser
        if parser.relevant(raw):
            obj = load_line(raw)
            if obj is None:
                parser.state.malformed_lines += 1
            else:
                self.items.append(obj)
                parser.note_backward(obj)
        if not parser.satisfied(self.scanned):
            return False
        return not self.history or (
            len(self.items) >= HISTORY_LINES or self.scanned >= HISTORY_BYTES
        )


class SessionReader:
    __slots__ = ("parser", "project_hint", "state", "tail")

    def __init__(
        self,
        state: SessionState,
        subagent: bool = False,
        project_hint: str = "",
    ) -> None:
        self.state = state
        self.tail = Tail(state.path)
        self.parser = make_parser(state, subagent)
        self.project_hint = project_hint

    def refresh(self, history: bool = True) -> str:
        """Read what changed: UNCHANGED, UPDATED (appended lines read), REREAD
        (read anew from the tail), GONE (the file cannot be found) or UNREADABLE."""
        status = self.tail.check()
        if status in (SAME, MISSING):
            return status
        if status == GROWN and self.tail.scan_forward(self._forward):
            self._finish()
            return UPDATED
        return REREAD if self._reread(history) else UNREADABLE

    def _forward(self, raw: bytes) -> None:
        if not self.parser.relevant(raw):
            return
        obj = load_line(raw)
        if obj is None:
            self.state.malformed_lines += 1
        else:
            self.parser.feed(obj)

    def _reread(self, history: bool) -> bool:
        state = self.state
        state.reset()
        self.parser.reset()
        visitor = _Backward(self.parser, history)
        if not self.tail.scan_backward(visitor):
            return False
        for obj in reversed(visitor.items):
            self.parser.feed(obj)
        if state.tool != CLAUDE_CODE and not state.project and visitor.scanned < self.tail.offset:
            self._head()
        self._finish()
        return True

    def _head(self) -> None:
        """Codex names the session's folder only in its first line: read just that."""
        try:
            with open(self.state.path, "rb") as handle:
                first = handle.readline(HEAD_BYTES)
        except OSError:
            return
        obj = load_line(first.rstrip(b"\n"))
        if obj is not None and obj.get("type") == "session_meta":
            self.parser.feed(obj)

    def _finish(self) -> None:
        state = self.state
        state.touch(self.tail.mtime_ns / 1e9)
        if not state.project:
            state.project = self.project_hint


def read_transcript(
    path: str,
    tool: str = CLAUDE_CODE,
    *,
    session_id: str = "",
    subagent: bool = False,
    history: bool = False,
) -> tuple[SessionState, bool]:
    """The state of one transcript, read once from its tail; and whether it could be read."""
    state = SessionState(tool, path, session_id=session_id)
    reader = SessionReader(state, subagent)
    status = reader.refresh(history=history)
    return state, status in (REREAD, UPDATED) and os.path.isfile(path)
