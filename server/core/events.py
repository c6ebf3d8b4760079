"""The events every surface consumes: WebSocket clients, the transcript, the
CLI's NDJSON, notifications and the tray.

Each event is a small dataclass with a literal ``type`` tag and the envelope
every event carries: ``run_id``, ``seq`` (1, 2, 3... within a run) and ``ts``
(seconds since the epoch). The JSON form is the dataclass's fields, ``type``
first; ``event_from_dict`` is its exact inverse.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

# "interrupted": the process running it died first; set when the next one opens the store.
RunStatus = Literal["running", "completed", "failed", "cancelled", "stopped", "interrupted"]
# A checkpoint_created event names at most this many changed files.
FILES_SHOWN = 200
FINAL_STATUSES: frozenset[str] = frozenset(
    {"completed", "failed", "cancelled", "stopped", "interrupted"}
)


class EventDecodeError(ValueError):
    """A JSON object that is not an event of a known type and shape."""


@dataclass(kw_only=True)
class Event:
    type: ClassVar[str]
    run_id: str
    seq: int = 0
    ts: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        # Shallow on purpose (asdict deep-copies): this runs for every delta on every surface.
        return {"type": self.type} | {name: getattr(self, name) for name in _field_names(self)}

    def to_json(self) -> str:
        """The JSON form, made once: the transcript and every socket send the same
        text. (An event is not changed once its channel has sent it.)"""
        cached: str | None = self.__dict__.get("_json")
        if cached is None:
            cached = self.__dict__["_json"] = _ENCODER.encode(self.to_dict())
        return cached


# json.dumps with an option builds an encoder at every call: this one is made once.
_ENCODER = json.JSONEncoder(ensure_ascii=False)


@dataclass(kw_only=True)
class RunStarted(Event):
    type: ClassVar[str] = "run_started"
    task: str
    workspace: str
    model: str
    session_id: str
    model_reason: str = ""  # why this model: chosen, routed (and why), the conversation's
    context_window: int | None = None  # tokens; None: not known
    continues: str = ""  # the run of the same conversation this one follows


@dataclass(kw_only=True)
class ContextAssembled(Event):
    """What every request of the run starts with: the system prompt and the
    tools, and how much of the conversation came from its earlier runs."""

    type: ClassVar[str] = "context_assembled"
    system: str
    tools: list[dict[str, Any]]  # name, description, parameters (JSON schema)
    instructions: str = ""  # the project's instruction file, relative to the workspace
    instructions_cut: bool = False  # it was longer than the limit and was cut
    history: int = 0  # messages carried over from the conversation's earlier runs
    # The model's window once its endpoint was asked (some report the one they serve).
    context_window: int | None = None


@dataclass(kw_only=True)
class MessageAdded(Event):
    """A message joins the conversation at ``index`` (counted across its runs);
    ``message`` is the provider-neutral form (server/providers/codec.py)."""

    type: ClassVar[str] = "message_added"
    index: int
    message: dict[str, Any]


@dataclass(kw_only=True)
class ModelRequested(Event):
    """A request goes to the model with the conversation's first ``messages`` messages."""

    type: ClassVar[str] = "model_requested"
    turn: int
    messages: int
    attempt: int = 1


@dataclass(kw_only=True)
class StreamDelta(Event):
    """A piece of streamed text; consecutive pieces of the same stream merge into
    one wherever they queue (a slow subscriber, a live run's history)."""

    text: str

    def merge_key(self) -> tuple[object, ...]:
        raise NotImplementedError

    def merged(self, later: Any) -> Any:
        """One delta standing for this one and a later one of the same stream."""
        return dataclasses.replace(later, text=self.text + later.text)


@dataclass(kw_only=True)
class TextDelta(StreamDelta):
    type: ClassVar[str] = "text_delta"
    turn: int

    def merge_key(self) -> tuple[object, ...]:
        return (self.type, self.run_id, self.turn)


@dataclass(kw_only=True)
class ThinkingDelta(StreamDelta):
    """The model's thinking as it streams (shown folded)."""

    type: ClassVar[str] = "thinking_delta"
    turn: int

    def merge_key(self) -> tuple[object, ...]:
        return (self.type, self.run_id, self.turn)


@dataclass(kw_only=True)
class ToolCallDelta(StreamDelta):
    """A tool call's arguments (JSON text) while the model writes them; the call
    itself follows as ``tool_requested``."""

    type: ClassVar[str] = "tool_call_delta"
    turn: int
    call_id: str
    tool: str

    def merge_key(self) -> tuple[object, ...]:
        return (self.type, self.run_id, self.turn, self.call_id)


@dataclass(kw_only=True)
class TurnDiscarded(Event):
    """What streamed of this turn's response is void (the connection dropped):
    it stays in the transcript, marked, and is not part of the conversation."""

    type: ClassVar[str] = "turn_discarded"
    turn: int
    reason: str


@dataclass(kw_only=True)
class ToolRequested(Event):
    type: ClassVar[str] = "tool_requested"
    turn: int
    call_id: str
    tool: str
    args: dict[str, Any]
    risk: str


@dataclass(kw_only=True)
class ToolResult(Event):
    type: ClassVar[str] = "tool_result"
    turn: int
    call_id: str
    tool: str
    ok: bool
    output: str
    truncated: bool = False
    duration_ms: int = 0


@dataclass(kw_only=True)
class UsageReported(Event):
    """What the model reported for one turn (input side = the context it saw)."""

    type: ClassVar[str] = "usage_reported"
    turn: int
    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0
    # What this response cost in USD, from the vendor's prices; None: not known.
    cost_usd: float | None = None


@dataclass(kw_only=True)
class CheckpointCreated(Event):
    """The workspace as it was before the tool call it names changed it."""

    type: ClassVar[str] = "checkpoint_created"
    turn: int
    tool: str
    checkpoint_id: str
    files_changed: list[str]  # at most FILES_SHOWN of them; the count is complete
    files_changed_count: int
    bytes_stored: int
    duration_ms: int
    skipped_count: int = 0
    baseline: bool = False  # the workspace's first: what was there, not a change


@dataclass(kw_only=True)
class GateDecided(Event):
    """How a tool call was judged, before it ran (or did not)."""

    type: ClassVar[str] = "gate_decided"
    turn: int
    call_id: str
    tool: str
    decision: str  # allow | ask | deny
    reason: str
    decided_by: str  # boundary | mode | rule | autonomy | hook
    rule: str = ""  # the rule that decided it, as written (e.g. "run_shell(npm test:*)")
    rule_id: str = ""
    mode: str = ""
    level: float = 0.0
    band: str = ""
    needs_checkpoint: bool = False
    notify: bool = False


@dataclass(kw_only=True)
class ApprovalRequested(Event):
    """The run waits for a person: allow once, allow always (``suggested_rule``), or deny."""

    type: ClassVar[str] = "approval_requested"
    turn: int
    call_id: str
    tool: str
    args: dict[str, Any]
    risk: str
    reason: str
    suggested_rule: str  # what "allow always" saves, at the scope chosen
    timeout_seconds: float
    expires_at: float


@dataclass(kw_only=True)
class ApprovalResolved(Event):
    type: ClassVar[str] = "approval_resolved"
    call_id: str
    decision: str  # allow_once | allow_always | deny | timeout
    by: str = ""  # the surface that answered (desktop, web, cli) or "timeout"
    message: str = ""  # what the model is told with a deny
    rule: str = ""  # the rule saved by allow_always
    scope: str = ""


@dataclass(kw_only=True)
class HookRan(Event):
    type: ClassVar[str] = "hook_ran"
    hook_event: str
    command: str
    exit_code: int | None
    blocked: bool = False
    reason: str = ""
    timed_out: bool = False
    duration_ms: int = 0
    call_id: str = ""


@dataclass(kw_only=True)
class Notice(Event):
    """Something the user should know without being asked (Trusted's notify)."""

    type: ClassVar[str] = "notice"
    turn: int
    call_id: str = ""
    text: str


@dataclass(kw_only=True)
class VerifyFinished(Event):
    type: ClassVar[str] = "verify_finished"
    turn: int
    command: str
    ok: bool
    exit_code: int | None
    output: str
    duration_ms: int = 0


@dataclass(kw_only=True)
class RunFinished(Event):
    type: ClassVar[str] = "run_finished"
    status: RunStatus
    reason: str
    turns: int = 0


_FIELD_NAMES: dict[str, tuple[str, ...]] = {}


def _field_names(event: Event) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(event.type)
    if names is None:
        names = _FIELD_NAMES[event.type] = tuple(f.name for f in dataclasses.fields(event))
    return names


@dataclass(kw_only=True)
class ContextUpdated(Event):
    """What fills the model's window now: one figure for every surface (the
    run header's bar, the CLI). Sent after each change: the context assembled,
    a message added, usage reported, a compaction."""

    type: ClassVar[str] = "context_updated"
    turn: int = 0
    # Characters per category: prompt, memory, tools, attachments, transcript.
    chars: dict[str, int] = field(default_factory=dict)
    tokens: int = 0  # the best figure: measured + estimated
    measured_tokens: int | None = None  # the provider's prompt size of the last response
    estimated_tokens: int = 0  # what is estimated (all of it when nothing is measured)
    window: int | None = None  # None: not known (then no ratio, no compaction point)
    reserve: int | None = None  # kept free for the answer
    compact_at: int | None = None  # window - reserve: compaction before a request past it
    ratio: float | None = None


@dataclass(kw_only=True)
class Compacted(Event):
    """The conversation was compacted: its middle summarised, the first user
    message and the last messages kept verbatim. ``messages`` is the whole
    conversation from here on (what replays and later requests start from)."""

    type: ClassVar[str] = "compacted"
    turn: int = 0
    reason: str = ""  # what triggered it: the window, the 120k characters, the user, an error
    before_chars: int = 0
    after_chars: int = 0
    dropped: int = 0  # messages summarised
    summary: str = ""
    summarised_by: str = ""  # the model's name, or "extract" (no model call)
    handoff_path: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        RunStarted,
        ContextAssembled,
        MessageAdded,
        ModelRequested,
        TextDelta,
        ThinkingDelta,
        ToolCallDelta,
        TurnDiscarded,
        ToolRequested,
        ToolResult,
        UsageReported,
        CheckpointCreated,
        GateDecided,
        ApprovalRequested,
        ApprovalResolved,
        HookRan,
        Notice,
        VerifyFinished,
        ContextUpdated,
        Compacted,
        RunFinished,
    )
}


def event_from_dict(data: object) -> Event:
    if not isinstance(data, dict):
        raise EventDecodeError(f"an event must be a JSON object, not {type(data).__name__}")
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise EventDecodeError(f"unknown event type {kind!r}")
    body = {k: v for k, v in data.items() if k != "type"}
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(body) - names)
    if unknown:
        raise EventDecodeError(f"{kind}: unexpected fields {', '.join(unknown)}")
    try:
        return cls(**body)
    except TypeError as exc:
        raise EventDecodeError(f"{kind}: {exc}") from exc
