"""A model that plays a script: the stand-in for a real model in tests, the demo
and ``sparrow run --script FILE``.

Each call to ``stream`` plays the next turn through the same streaming path a
real provider uses (text in small chunks, then tool calls, then usage). When
the script has no turn left the provider raises ``ScriptExhausted``, so a test
whose script is too short fails loudly instead of hanging or inventing text.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio

from server.providers.base import (
    Message,
    ProviderError,
    StreamPart,
    TextChunk,
    Thinking,
    ThinkingBlock,
    ThinkingChunk,
    ToolArgsChunk,
    ToolCall,
    ToolCallChunk,
    ToolSpec,
    Usage,
    UsageChunk,
)


class ScriptExhausted(ProviderError):
    """The script has no turn left for the model to play."""


class ScriptError(ValueError):
    """A script file or object that does not follow the documented format."""


@dataclass(frozen=True)
class ScriptedToolCall:
    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ScriptedTurn:
    text: str = ""
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    usage: Usage | None = None
    thinking: str = ""


TurnFunction = Callable[[Sequence[Message]], ScriptedTurn]

_CHUNK = re.compile(r"\S+\s*|\s+")
_USAGE_KEYS = {f for f in Usage.__dataclass_fields__}


class ScriptedProvider:
    def __init__(
        self,
        turns: Sequence[ScriptedTurn] | TurnFunction,
        *,
        name: str = "scripted",
        chunk_delay: float = 0.0,
        accepts_images: bool = False,
    ) -> None:
        self._turns = list(turns) if not callable(turns) else None
        self._function = turns if callable(turns) else None
        self._played = 0
        self._name = name
        self._chunk_delay = chunk_delay
        self.reported_window: int | None = None
        # A script says whether its model takes images, so both answers can be tested.
        self.accepts_images = accepts_images
        # The messages of every request, as received: what a test asserts on.
        self.received: list[tuple[Message, ...]] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def turns_played(self) -> int:
        return self._played

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def _next_turn(self, messages: Sequence[Message]) -> ScriptedTurn:
        if self._function is not None:
            return self._function(messages)
        assert self._turns is not None
        if self._played >= len(self._turns):
            raise ScriptExhausted(
                f"the scripted model has no turn left: its script has {len(self._turns)} "
                f"turn(s) and the run asked for turn {self._played + 1}"
            )
        return self._turns[self._played]

    async def _pause(self) -> None:
        if self._chunk_delay:
            await anyio.sleep(self._chunk_delay)
        else:
            await anyio.lowlevel.checkpoint()

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system: str = ""
    ) -> AsyncGenerator[StreamPart, None]:
        self.received.append(tuple(messages))
        turn = self._next_turn(messages)
        self._played += 1
        # Unique across the runs of a conversation, as a real model's ids are.
        number = sum(1 for m in messages if m.role == "assistant") + 1
        for piece in _CHUNK.findall(turn.thinking):
            await self._pause()
            yield ThinkingChunk(piece)
        if turn.thinking:
            yield ThinkingBlock(Thinking(turn.thinking))
        for piece in _CHUNK.findall(turn.text):
            await self._pause()
            yield TextChunk(piece)
        for index, call in enumerate(turn.tool_calls, start=1):
            tool_call = ToolCall(id=f"call_{number}_{index}", name=call.tool, args=call.args)
            await self._pause()
            yield ToolArgsChunk(tool_call.id, call.tool, json.dumps(call.args))
            yield ToolCallChunk(tool_call)
        yield UsageChunk(turn.usage or Usage())


def parse_script(data: object, where: str = "script") -> list[ScriptedTurn]:
    """Turns from the documented JSON shape: ``{"turns": [{"text", "tool_calls",
    "usage"}], "images": false}``."""
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise ScriptError(f'{where}: expected an object with a "turns" list')
    unknown = set(data) - {"turns", "images"}
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    if not isinstance(data.get("images", False), bool):
        raise ScriptError(f'{where}: "images" must be true or false')
    return [_parse_turn(raw, f"{where}: turns[{i}]") for i, raw in enumerate(data["turns"])]


def _parse_turn(raw: object, where: str) -> ScriptedTurn:
    if not isinstance(raw, dict):
        raise ScriptError(f"{where}: expected an object")
    unknown = set(raw) - {"text", "thinking", "tool_calls", "usage"}
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise ScriptError(f"{where}.text: expected a string")
    thinking = raw.get("thinking", "")
    if not isinstance(thinking, str):
        raise ScriptError(f"{where}.thinking: expected a string")
    calls_raw = raw.get("tool_calls", [])
    if not isinstance(calls_raw, list):
        raise ScriptError(f"{where}.tool_calls: expected a list")
    calls = []
    for j, call in enumerate(calls_raw):
        at = f"{where}.tool_calls[{j}]"
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
            raise ScriptError(f'{at}: expected an object with a "tool" name')
        args = call.get("args", {})
        if not isinstance(args, dict):
            raise ScriptError(f"{at}.args: expected an object")
        calls.append(ScriptedToolCall(tool=call["tool"], args=args))
    usage_raw = raw.get("usage")
    usage = None
    if usage_raw is not None:
        if not isinstance(usage_raw, dict) or set(usage_raw) - _USAGE_KEYS:
            raise ScriptError(f"{where}.usage: expected an object with keys {sorted(_USAGE_KEYS)}")
        for key, value in usage_raw.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ScriptError(f"{where}.usage.{key}: expected a whole number >= 0")
        usage = Usage(**usage_raw)
    return ScriptedTurn(text=text, tool_calls=tuple(calls), usage=usage, thinking=thinking)


def script_accepts_images(data: object) -> bool:
    """Whether a script's model takes images (``"images": true``); it does not by default."""
    return isinstance(data, dict) and data.get("images") is True


def read_script(path: Path) -> object:
    """A script file's JSON, unchecked (``parse_script`` checks it)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"{path}: cannot be read: {exc.strerror}") from exc
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ScriptError(f"{path}: not valid JSON: {exc}") from exc


def load_script(path: Path) -> list[ScriptedTurn]:
    return parse_script(read_script(path), str(path))
