"""The one small interface between the engine and a model.

A provider streams one response to a conversation: text and thinking as it
comes, each tool call's arguments as they stream and then the finished call,
the usage the model reports, and what happened on the way (a retry, a
partial response thrown away). The engine never sees a vendor's types.

A provider is an async context manager: a real one opens its HTTP client once
for the whole run, not once per turn.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Protocol, Self


class ProviderError(RuntimeError):
    """The model could not produce a response; the message is for the user."""


class ContextTooLong(ProviderError):
    """The request did not fit the model's window (the provider said so)."""


@dataclass(frozen=True)
class Usage:
    # Uncached input only: what was read from the cache and written to it is apart.
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
class Attachment:
    """A file or folder given with a user message, as the model gets it: an
    image's bytes (``image/*``), or text (``text/plain``: a file inlined, a
    folder's listing, with the header and notices the model reads).

    ``data`` is empty when the attachment was read back from a transcript,
    which records only ``path``, ``size`` and ``sha256`` (never the content)."""

    name: str
    media_type: str
    data: bytes
    path: str = ""  # the real path it was read from
    size: int = 0  # of the file on disk (a folder: 0)
    sha256: str = ""  # of the file's bytes as read (a folder: of its listing)
    # What was sent, as a transcript recorded it (``data`` is then empty).
    sent_bytes: int = 0
    sent_sha256: str = ""

    def sent(self) -> tuple[int, str]:
        """The size and hash of what the model got."""
        if self.data:
            return len(self.data), hashlib.sha256(self.data).hexdigest()
        return self.sent_bytes, self.sent_sha256

    @property
    def is_image(self) -> bool:
        return self.media_type.startswith("image/")


@dataclass(frozen=True)
class Thinking:
    """A block of the model's thinking. ``signature`` and ``provider`` let it go
    back to the same provider, which checks that it was not altered."""

    text: str
    signature: str | None = None
    provider: str | None = None
    id: str | None = None


@dataclass(frozen=True)
class UserMessage:
    text: str
    attachments: tuple[Attachment, ...] = ()
    role: Literal["user"] = "user"


@dataclass(frozen=True)
class AssistantMessage:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    thinking: tuple[Thinking, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True)
class ToolResultMessage:
    call_id: str
    tool: str
    content: str
    ok: bool
    role: Literal["tool"] = "tool"


Message = UserMessage | AssistantMessage | ToolResultMessage


# --- what a stream yields -------------------------------------------------------


@dataclass(frozen=True)
class TextChunk:
    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ThinkingChunk:
    """Thinking text as it streams (shown folded; the finished block follows)."""

    text: str
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True)
class ThinkingBlock:
    """A finished block of thinking, as it goes back into the conversation."""

    thinking: Thinking
    kind: Literal["thinking_block"] = "thinking_block"


@dataclass(frozen=True)
class ToolArgsChunk:
    """A piece of a tool call's arguments (JSON text) while the model writes them."""

    call_id: str
    tool: str
    text: str
    kind: Literal["tool_args"] = "tool_args"


@dataclass(frozen=True)
class ToolCallChunk:
    call: ToolCall
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True)
class UsageChunk:
    usage: Usage
    kind: Literal["usage"] = "usage"


@dataclass(frozen=True)
class RetryNotice:
    """The provider failed in a way worth waiting out; it tries again after ``wait``."""

    text: str
    wait: float
    kind: Literal["retry"] = "retry"


@dataclass(frozen=True)
class ResponseDiscarded:
    """What streamed of this response so far is void (the connection dropped
    mid-stream); the provider asks again and the response starts over."""

    reason: str
    kind: Literal["discarded"] = "discarded"


StreamPart = (
    TextChunk
    | ThinkingChunk
    | ThinkingBlock
    | ToolArgsChunk
    | ToolCallChunk
    | UsageChunk
    | RetryNotice
    | ResponseDiscarded
)


class Provider(Protocol):
    @property
    def name(self) -> str: ...

    # The context window the endpoint says it serves, once the provider is open.
    reported_window: int | None

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system: str = ""
    ) -> AsyncGenerator[StreamPart, None]: ...
