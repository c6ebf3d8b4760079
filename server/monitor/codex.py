"""Codex rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Each line is ``{timestamp, type, payload}`` (observed; OpenAI calls the format
internal):
- ``session_meta`` (the first line): the session ``id`` and ``cwd``;
- ``turn_context`` (each turn): ``model`` and ``cwd``;
- ``event_msg`` with payload type ``token_count``: ``info.last_token_usage``
  (the last request: its ``total_tokens`` is what is in the context window now,
  as Codex itself counts it), ``info.total_token_usage`` (cumulative) and
  ``info.model_context_window``; ``info`` is null on early events;
- a compaction is a ``compacted`` line or an ``event_msg`` of type
  ``context_compacted`` (a version may write both for one compaction);
- tool calls are ``response_item`` payloads of type ``function_call``,
  ``custom_tool_call`` or ``local_shell_call``.
"""

from __future__ import annotations

from typing import Any

from server.monitor.state import CODEX, SessionState, as_int, parse_time

TOOL_CALL_TYPES = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
# Past this much tail, stop looking for the model's name (the usage is what matters).
MODEL_SEARCH_BYTES = 4 * 1024 * 1024


class CodexParser:
    tool = CODEX

    __slots__ = ("_compaction_open", "_found_model", "_found_usage", "state")

    def __init__(self, state: SessionState, subagent: bool = False) -> None:
        self.state = state
        self._compaction_open = False  # no usage since the last compaction mark
        self._found_usage = False
        self._found_model = False

    def reset(self) -> None:
        self._compaction_open = False
        self._found_usage = False
        self._found_model = False

    @staticmethod
    def relevant(raw: bytes) -> bool:
        return (
            b"token_count" in raw
            or b"turn_context" in raw
            or b"session_meta" in raw
            or b"ompact" in raw
            or b'_call"' in raw
        )

    def note_backward(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "turn_context":
            self._found_model = True
        elif kind == "event_msg" and self._usage(obj.get("payload")) is not None:
            self._found_usage = True

    def satisfied(self, scanned: int = 0) -> bool:
        return self._found_usage and (self._found_model or scanned > MODEL_SEARCH_BYTES)

    def feed(self, obj: dict[str, Any]) -> None:
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            return
        kind = obj.get("type")
        state = self.state
        at = parse_time(obj.get("timestamp"))
        if kind == "event_msg":
            event = payload.get("type")
            if event == "token_count":
                self._token_count(payload, at)
            elif event == "context_compacted":
                self._compacted(at)
        elif kind == "response_item":
            if payload.get("type") in TOOL_CALL_TYPES:
                state.tool_calls += 1
                state.touch(at)
        elif kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model:
                state.model = model
            self._cwd(payload)
        elif kind == "session_meta":
            ident = payload.get("id")
            if isinstance(ident, str) and ident:
                state.session_id = ident
            self._cwd(payload)
            state.touch(at)
        elif kind == "compacted":
            self._compacted(at)

    @staticmethod
    def _usage(payload: object) -> tuple[int, int | None, int | None] | None:
        """(context tokens, window, cumulative total) of a token_count payload, if it has any."""
        if not isinstance(payload, dict) or payload.get("type") != "token_count":
            return None
        info = payload.get("info")
        if not isinstance(info, dict):  # null on the early events of a session
            return None
        last = info.get("last_token_usage")
        if not isinstance(last, dict):
            return None
        tokens = as_int(last.get("total_tokens")) or (
            as_int(last.get("input_tokens")) + as_int(last.get("output_tokens"))
        )
        if tokens == 0:
            return None
        window = as_int(info.get("model_context_window")) or None
        total = info.get("total_token_usage")
        cumulative = (
            (as_int(total.get("total_tokens")) or None) if isinstance(total, dict) else None
        )
        return tokens, window, cumulative

    def _token_count(self, payload: dict[str, Any], at: float | None) -> None:
        found = self._usage(payload)
        state = self.state
        if found is None:
            state.touch(at)
            return
        tokens, window, cumulative = found
        if window:
            state.reported_window = window
        # The same event is often written twice: the cumulative total tells them apart.
        marker = None if cumulative is None else f"total:{cumulative}"
        state.saw_usage(tokens, at, marker)
        self._compaction_open = False

    def _compacted(self, at: float | None) -> None:
        if self._compaction_open:  # the other mark of the same compaction
            self.state.touch(at)
            return
        self.state.saw_compaction(at)
        self._compaction_open = True

    def _cwd(self, payload: dict[str, Any]) -> None:
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and cwd:
            self.state.project = cwd
