"""How events read in a terminal: the one human renderer shared by ``run`` and
``replay``, and the NDJSON one."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from server.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    Compacted,
    Event,
    GateDecided,
    HookRan,
    Notice,
    RunFinished,
    RunStarted,
    TextDelta,
    ThinkingDelta,
    ToolRequested,
    ToolResult,
    TurnDiscarded,
    UsageReported,
    VerifyFinished,
)

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
        self.out.write(event.to_json() + "\n")
        self.out.flush()


class HumanRenderer:
    def __init__(self, out: TextIO = sys.stdout, *, show_questions: bool = True) -> None:
        self.out = out
        # False when the terminal's approver prints each question itself.
        self.show_questions = show_questions
        self._stream = ""  # what is being streamed now: "", "text" or "thinking"
        self._tokens = 0
        self._cost: float | None = 0.0

    def _line(self, text: str) -> None:
        if self._stream:
            self.out.write("\n")
            self._stream = ""
        self.out.write(text + "\n")

    def _streamed(self, kind: str, text: str) -> None:
        if self._stream != kind:
            if self._stream:
                self.out.write("\n")
            if kind == "thinking":
                self.out.write("  thinking: ")
            self._stream = kind
        self.out.write(text.replace("\n", "\n  ") if kind == "thinking" else text)

    def _spent(self) -> str:
        if not self._tokens:
            return ""
        cost = "cost unknown" if self._cost is None else f"${self._cost:.4f}"
        return f" · {self._tokens:,} tokens · {cost}"

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            why = f" ({event.model_reason})" if event.model_reason else ""
            self._line(f"run {event.run_id} · model {event.model}{why} · {event.workspace}")
            if event.continues:
                self._line(f"follow-up of {event.continues}")
            self._line(f"task: {event.task}\n")
        elif isinstance(event, TextDelta):
            self._streamed("text", event.text)
        elif isinstance(event, ThinkingDelta):
            self._streamed("thinking", event.text)
        elif isinstance(event, TurnDiscarded):
            self._line(f"  ⟲ discarded: {event.reason}")
        elif isinstance(event, UsageReported):
            self._tokens += (
                event.input_tokens
                + event.cache_creation_input_tokens
                + event.cache_read_input_tokens
                + event.output_tokens
            )
            if event.cost_usd is None or self._cost is None:
                self._cost = None
            else:
                self._cost += event.cost_usd
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
            turns = f"{event.turns} turn{'s' if event.turns != 1 else ''}"
            self._line(f"\n● {event.status}: {event.reason} ({turns}{self._spent()})")
            self._tokens, self._cost = 0, 0.0
        elif isinstance(event, ApprovalRequested) and not self.show_questions:
            pass
        elif isinstance(event, Compacted):
            handoff = f"; handoff doc: {event.handoff_path}" if event.handoff_path else ""
            self._line(
                f"  ⟳ compacted ({event.reason}): {event.dropped} messages summarised, "
                f"{event.before_chars:,} → {event.after_chars:,} characters{handoff}"
            )
        else:
            line = safety_line(event)
            if line:
                self._line(line)
        self.out.flush()


def safety_line(event: Event) -> str:
    """The gate, approvals, hooks, notices and verification, as one line each; ""
    for what needs no line (an allow by the dial is the ordinary case)."""
    if isinstance(event, GateDecided):
        return _gate_line(event)
    if isinstance(event, ApprovalRequested):
        return f"    ? asks: {event.reason} · allow always would save: {event.suggested_rule}"
    if isinstance(event, ApprovalResolved):
        return _approval_line(event)
    if isinstance(event, HookRan):
        if event.blocked:
            return f"    ⛔ hook {event.hook_event} blocked it: {event.reason or event.command}"
        if event.timed_out or (event.exit_code is not None and event.exit_code != 0):
            what = "timed out" if event.timed_out else f"failed (exit {event.exit_code})"
            return f"    ! hook {event.hook_event} {what}: {event.command}"
        return ""
    if isinstance(event, Notice):
        return f"    note: {event.text}"
    if isinstance(event, VerifyFinished):
        mark = "✓" if event.ok else "✗"
        first = (event.output.strip().splitlines() or [""])[-1]
        return f"  {mark} verify `{event.command}`: {'passed' if event.ok else 'failed'}" + (
            f" · {first}" if first and not event.ok else ""
        )
    return ""


def _gate_line(event: GateDecided) -> str:
    """Who decided, when it was not the dial alone; the rule's id is what
    `sparrow permissions remove` takes. (A denial's reason is in the tool result.)"""
    if event.decision == "ask" or event.decided_by in ("autonomy", ""):
        return ""  # an ask: approval_requested follows, with more to say
    verb = "denied" if event.decision == "deny" else "allowed"
    if event.rule:
        ident = f" [{event.rule_id}]" if event.rule_id else ""
        return f"    gate: {verb} by rule {event.rule}{ident}"
    if event.decision == "deny":
        return f"    gate: denied by the {event.decided_by}"
    return f"    gate: allowed by the {event.decided_by}: {event.reason}"


def _approval_line(event: ApprovalResolved) -> str:
    if event.decision == "allow_once":
        return f"    ✓ allowed once by {event.by}"
    if event.decision == "allow_always":
        return f"    ✓ allowed always by {event.by}: saved {event.rule} ({event.scope})"
    return ""  # a denial or a timeout: the tool result that follows says so
