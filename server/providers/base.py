"""The one small interface between the engine and a model.

A provider streams one response to a conversation: text chunks, complete tool
calls and the usage the model reports. The engine never sees a vendor's types.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


class ProviderError(RuntimeError):
    """The model could not produce a response; the message is for the user."""


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0

    @property
    def context_tokens(self) -> int:
        """What filled the model's window for this request."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class UserMessage:
    text: str
    role: Literal["user"] = "user"


@dataclass(frozen=True)
class AssistantMessage:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True)
class ToolResultMessage:
    call_id: str
    tool: str
    content: str
    ok: bool
    role: Literal["tool"] = "tool"


Message = UserMessage | AssistantMessage | ToolResultMessage


@dataclass(frozen=True)
class TextChunk:
    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ToolCallChunk:
    call: ToolCall
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True)
class UsageChunk:
    usage: Usage
    kind: Literal["usage"] = "usage"


StreamPart = TextChunk | ToolCallChunk | UsageChunk


@dataclass
class Conversation:
    """The messages so far, in order; the first is always the user's task."""

    messages: list[Message] = field(default_factory=list)


class Provider(Protocol):
    @property
    def name(self) -> str: ...

    def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> AsyncIterator[StreamPart]: ...
