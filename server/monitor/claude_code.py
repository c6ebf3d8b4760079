"""Claude Code transcripts: ``<config>/projects/<escaped-cwd>/<session>.jsonl``.

The rules (observed; Anthropic calls the format internal):
- the context is ``input_tokens + cache_creation_input_tokens +
  cache_read_input_tokens`` of the last real ``assistant`` line;
- not real: ``isSidechain: true`` lines in a main transcript (a subagent's own
  transcript is all sidechain, and counts there), ``message.model ==
  "<synthetic>"``, and all-zero usage;
- one API response is several ``assistant`` lines sharing ``message.id`` and
  ``requestId``, each repeating the input side: one sample, one figure;
- a compaction is a ``system`` line with ``subtype: "compact_boundary"`` and
  ``compactMetadata {trigger, preTokens[, postTokens]}``, followed by a
  ``user`` line with ``isCompactSummary: true`` (older versions write only the
  latter); usage from before it is stale until the next assistant line;
- ``summary`` lines are session titles, not compactions.
"""

from __future__ import annotations

from typing import Any

from server.monitor.state import CLAUDE_CODE, SessionState, as_int, parse_time

SYNTHETIC_MODEL = "<synthetic>"
_KEEP_TOOL_IDS = 16


class ClaudeCodeParser:
    tool = CLAUDE_CODE

    __slots__ = ("_awaiting_summary", "_found_usage", "state", "subagent")

    def __init__(self, state: SessionState, subagent: bool = False) -> None:
        self.state = state
        self.subagent = subagent
        self._awaiting_summary = False  # a boundary was seen; its summary line is not a second one
        self._found_usage = False

    def reset(self) -> None:
        self._awaiting_summary = False
        self._found_usage = False

    @staticmethod
    def relevant(raw: bytes) -> bool:
        """A cheap test on the raw line: could it change what we know? (Most lines
        are tool results and user text, often large: those are never parsed.)"""
        return b'"assistant"' in raw or b"ompact" in raw

    # --- the backward scan: has the tail shown enough? ---------------------------------

    def note_backward(self, obj: dict[str, Any]) -> None:
        if obj.get("type") == "assistant" and self._usage(obj) is not None:
            self._found_usage = True

    def satisfied(self, scanned: int = 0) -> bool:
        return self._found_usage

    # --- reading forward --------------------------------------------------------------

    def feed(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "assistant":
            self._assistant(obj)
        elif kind == "system" and obj.get("subtype") == "compact_boundary":
            if self._skipped(obj):
                return
            meta = obj.get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            trigger = meta.get("trigger")
            self.state.saw_compaction(
                parse_time(obj.get("timestamp")),
                trigger if isinstance(trigger, str) else None,
                as_int(meta.get("preTokens")) or None,
                as_int(meta.get("postTokens")) or None,
            )
            self._awaiting_summary = True
            self._project(obj)
        elif kind == "user" and obj.get("isCompactSummary") is True:
            if self._skipped(obj):
                return
            if self._awaiting_summary:
                self._awaiting_summary = False
                self.state.touch(parse_time(obj.get("timestamp")))
            else:  # an older version: the summary is the only mark
                self.state.saw_compaction(parse_time(obj.get("timestamp")))

    def _skipped(self, obj: dict[str, Any]) -> bool:
        return obj.get("isSidechain") is True and not self.subagent

    def _usage(self, obj: dict[str, Any]) -> int | None:
        """The context size this assistant line reports, or None if it is not a real one."""
        if self._skipped(obj):
            return None
        message = obj.get("message")
        if not isinstance(message, dict) or message.get("model") == SYNTHETIC_MODEL:
            return None
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return None
        context = (
            as_int(usage.get("input_tokens"))
            + as_int(usage.get("cache_creation_input_tokens"))
            + as_int(usage.get("cache_read_input_tokens"))
        )
        if context == 0:  # all-zero usage (an error or an interrupted call)
            return None
        return context

    def _assistant(self, obj: dict[str, Any]) -> None:
        tokens = self._usage(obj)
        if tokens is None:
            return
        state = self.state
        message: dict[str, Any] = obj["message"]
        raw_id = message.get("id") or obj.get("requestId")
        message_id = raw_id if isinstance(raw_id, str) else None
        self._count_tools(message, message_id)
        state.saw_usage(tokens, parse_time(obj.get("timestamp")), message_id)
        self._awaiting_summary = False
        model = message.get("model")
        if isinstance(model, str) and model:
            state.model = model
        self._project(obj)

    def _count_tools(self, message: dict[str, Any], message_id: str | None) -> None:
        content = message.get("content")
        if not isinstance(content, list):
            return
        state = self.state
        # Streamed lines of one response may repeat earlier blocks: count each id once.
        seen = state.last_tool_use_ids if message_id == state.last_message_id else ()
        new: list[str] = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                ident = block.get("id")
                key = ident if isinstance(ident, str) else f"#{len(seen) + len(new)}"
                if key not in seen and key not in new:
                    new.append(key)
        if new:
            state.tool_calls += len(new)
            state.last_tool_use_ids = (*seen, *new)[-_KEEP_TOOL_IDS:]
        elif message_id != state.last_message_id:
            state.last_tool_use_ids = ()

    def _project(self, obj: dict[str, Any]) -> None:
        cwd = obj.get("cwd")
        if isinstance(cwd, str) and cwd:
            self.state.project = cwd
