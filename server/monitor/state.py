"""What is known about one session from its transcript: plain classes with
``__slots__`` (one per watched file, so small), filled in by the format parsers.

No dataclasses here on purpose: importing them costs the hook process ~10 ms.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

CLAUDE_CODE = "claude-code"
CODEX = "codex"
TOOLS = (CLAUDE_CODE, CODEX)

MAX_COMPACTIONS = 20  # the most recent ones are kept
MAX_SAMPLES = 40  # points of the trend line kept per session


class Compaction:
    """One compaction of the context: when, why, and its size before and after if known."""

    __slots__ = ("at", "post_tokens", "pre_tokens", "trigger")

    def __init__(
        self,
        at: float | None,
        trigger: str | None = None,
        pre_tokens: int | None = None,
        post_tokens: int | None = None,
    ) -> None:
        self.at = at
        self.trigger = trigger
        self.pre_tokens = pre_tokens
        self.post_tokens = post_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "trigger": self.trigger,
            "pre_tokens": self.pre_tokens,
            "post_tokens": self.post_tokens,
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Compaction) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.at, self.trigger, self.pre_tokens, self.post_tokens))

    def __repr__(self) -> str:
        return f"Compaction({self.to_dict()})"


class SessionState:
    """The parsers' running state for one transcript file."""

    __slots__ = (
        "after_compaction",
        "compactions",
        "context_tokens",
        "last_activity",
        "last_message_id",
        "last_tool_use_ids",
        "malformed_lines",
        "model",
        "parent_session",
        "path",
        "project",
        "reported_window",
        "samples",
        "session_id",
        "tool",
        "tool_calls",
        "total_marker",
    )

    def __init__(
        self,
        tool: str,
        path: str,
        session_id: str = "",
        parent_session: str | None = None,
        project: str = "",
    ) -> None:
        self.tool = tool
        self.path = path
        self.session_id = session_id
        self.parent_session = parent_session  # set for a Claude Code subagent's transcript
        self.project = project  # the session's working folder, when known
        self.reset()

    def reset(self) -> None:
        """Forget what was read (the file is read anew); keep who the session is."""
        self.model: str | None = None
        self.context_tokens: int | None = None  # the last real usage: the context now
        self.reported_window: int | None = None  # the window the transcript states (Codex)
        self.after_compaction = False  # compacted since the last usage: tokens are stale
        self.compactions: list[Compaction] = []
        self.samples: list[tuple[float, int]] = []  # (when, context tokens), oldest first
        self.tool_calls = 0  # seen since the cursor's start: the fallback heuristic's count
        self.last_activity = 0.0
        self.last_message_id: str | None = None
        self.last_tool_use_ids: tuple[str, ...] = ()
        self.total_marker: int | None = None  # Codex: cumulative total at the last sample
        self.malformed_lines = 0

    # --- updates the parsers make ---------------------------------------------------

    def saw_usage(self, tokens: int, at: float | None, message_id: str | None) -> None:
        """A real usage: the context is ``tokens`` now. Lines of one streamed
        response share ``message_id`` and make one sample."""
        self.context_tokens = tokens
        self.after_compaction = False
        when = at if at is not None else self.last_activity
        if message_id is not None and message_id == self.last_message_id and self.samples:
            self.samples[-1] = (self.samples[-1][0], tokens)
        else:
            self.samples.append((when, tokens))
            if len(self.samples) > MAX_SAMPLES:
                del self.samples[0]
        self.last_message_id = message_id
        self.touch(at)

    def saw_compaction(
        self,
        at: float | None,
        trigger: str | None = None,
        pre_tokens: int | None = None,
        post_tokens: int | None = None,
    ) -> None:
        if pre_tokens is None:
            pre_tokens = self.context_tokens
        self.compactions.append(Compaction(at, trigger, pre_tokens, post_tokens))
        if len(self.compactions) > MAX_COMPACTIONS:
            del self.compactions[0]
        # Usage from before the boundary is stale until the next real usage.
        self.context_tokens = post_tokens
        self.after_compaction = True
        self.last_message_id = None
        if post_tokens is not None:
            self.samples.append((at if at is not None else self.last_activity, post_tokens))
            if len(self.samples) > MAX_SAMPLES:
                del self.samples[0]
        self.touch(at)

    def touch(self, at: float | None) -> None:
        if at is not None and at > self.last_activity:
            self.last_activity = at


def parse_time(value: object) -> float | None:
    """Seconds since the epoch of an ISO 8601 timestamp (``...Z`` included), or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def as_int(value: object) -> int:
    """A token count from JSON: ints (and integral floats) only; anything else is 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(0, value)
    if isinstance(value, float) and value.is_integer():
        return max(0, int(value))
    return 0
