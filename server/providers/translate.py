"""Between Sparrow's provider-neutral messages and pydantic-ai's: the
conversation going out, the stream's events coming back.

Imports pydantic-ai at module level: only the adapter imports this module,
when a run first calls a real model (it costs ~1.5 s and ~100 MB)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RequestUsage

from server.providers.base import (
    AssistantMessage,
    Message,
    StreamPart,
    TextChunk,
    Thinking,
    ThinkingBlock,
    ThinkingChunk,
    ToolArgsChunk,
    ToolCall,
    ToolCallChunk,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)


def request_parameters(tools: Sequence[ToolSpec]) -> ModelRequestParameters:
    return ModelRequestParameters(
        function_tools=[
            ToolDefinition(
                name=t.name, description=t.description, parameters_json_schema=t.parameters
            )
            for t in tools
        ]
    )


def _user_content(message: UserMessage) -> str | list[UserContent]:
    if not message.attachments:
        return message.text
    content: list[UserContent] = [message.text]
    for attachment in message.attachments:
        if not attachment.data:  # read back from a transcript, which keeps no content
            content.append(f"[{attachment.name} ({attachment.media_type}) was attached here]")
        elif attachment.is_image:
            content.append(f"[Attached image {attachment.name}]")
            content.append(BinaryContent(attachment.data, media_type=attachment.media_type))
        else:  # inlined text or a folder's listing, header and notices included
            content.append(attachment.data.decode("utf-8", "replace"))
    return content


def _response_parts(message: AssistantMessage, provider: str) -> list[ModelResponsePart]:
    parts: list[ModelResponsePart] = []
    for block in message.thinking:
        # A signature only means something to the provider that made it.
        own = block.provider == provider
        parts.append(
            ThinkingPart(
                block.text,
                id=block.id if own else None,
                signature=block.signature if own else None,
                provider_name=block.provider if own else None,
            )
        )
    if message.text:
        parts.append(TextPart(message.text))
    parts.extend(ToolCallPart(c.name, c.args, c.id) for c in message.tool_calls)
    return parts


def to_model_messages(
    messages: Sequence[Message], system: str, provider: str
) -> list[ModelMessage]:
    """The conversation as pydantic-ai messages. Consecutive user-side messages
    (tool results, a follow-up after a cancelled turn) go out as one request,
    as every vendor wants turns to alternate; the system prompt rides on the
    last request, where pydantic-ai looks for it."""
    out: list[ModelMessage] = []
    pending: list[ModelRequestPart] = []

    def flush() -> None:
        if pending:
            out.append(ModelRequest(parts=list(pending)))
            pending.clear()

    for message in messages:
        if isinstance(message, UserMessage):
            pending.append(UserPromptPart(_user_content(message)))
        elif isinstance(message, ToolResultMessage):
            pending.append(
                ToolReturnPart(
                    message.tool,
                    message.content,
                    message.call_id,
                    outcome="success" if message.ok else "failed",
                )
            )
        else:
            flush()
            parts = _response_parts(message, provider)
            if parts:
                out.append(ModelResponse(parts=parts))
    flush()
    if system:
        last = out[-1] if out else None
        if isinstance(last, ModelRequest):
            last.instructions = system
        else:
            out.append(ModelRequest(parts=[], instructions=system))
    return out


def to_usage(usage: RequestUsage) -> Usage | None:
    """Sparrow's usage (uncached input apart from the cache), None when the
    endpoint sent none. pydantic-ai's input_tokens includes the cache's."""
    if usage.unmeasured_requests and not (usage.input_tokens or usage.output_tokens):
        return None
    read, write = usage.cache_read_tokens, usage.cache_write_tokens
    return Usage(
        input_tokens=max(0, usage.input_tokens - read - write),
        cache_creation_input_tokens=write,
        cache_read_input_tokens=read,
        output_tokens=usage.output_tokens,
    )


@dataclass
class EventMapper:
    """Turns one response's pydantic-ai stream events into stream parts. Tool
    calls are told by the part's index until their end event brings the
    whole call (with arguments parsed)."""

    provider: str
    # Call ids the conversation used already. Some OpenAI-compatible servers
    # number calls per response (call_1 at every turn); a run needs each call's
    # id to be its own (results, approvals, the window's cards), so a repeat
    # gets a suffix, in the history too.
    taken: set[str] = field(default_factory=set)
    _calls: dict[int, tuple[str, str]] = field(default_factory=dict)

    def _unique(self, call_id: str) -> str:
        found = call_id or "call"
        number = 1
        while found in self.taken:
            number += 1
            found = f"{call_id or 'call'}-{number}"
        self.taken.add(found)
        return found

    def parts(self, event: object) -> list[StreamPart]:
        # Most events are a piece of text: answered first, without the general path.
        if type(event) is PartDeltaEvent and type(event.delta) is TextPartDelta:
            return [TextChunk(event.delta.content_delta)] if event.delta.content_delta else []
        if isinstance(event, PartStartEvent):
            return self._start(event.index, event.part)
        if isinstance(event, PartDeltaEvent):
            return self._delta(event.index, event.delta)
        if isinstance(event, PartEndEvent):
            return self._end(event.index, event.part)
        return []

    def _start(self, index: int, part: object) -> list[StreamPart]:
        if isinstance(part, TextPart):
            return [TextChunk(part.content)] if part.content else []
        if isinstance(part, ThinkingPart):
            return [ThinkingChunk(part.content)] if part.content else []
        if isinstance(part, ToolCallPart):
            call_id = self._unique(part.tool_call_id)
            self._calls[index] = (call_id, part.tool_name)
            text = _args_text(part.args)
            return [ToolArgsChunk(call_id, part.tool_name, text)]
        return []

    def _delta(self, index: int, delta: object) -> list[StreamPart]:
        if isinstance(delta, TextPartDelta):
            return [TextChunk(delta.content_delta)] if delta.content_delta else []
        if isinstance(delta, ThinkingPartDelta):
            return [ThinkingChunk(delta.content_delta)] if delta.content_delta else []
        if isinstance(delta, ToolCallPartDelta) and index in self._calls:
            call_id, name = self._calls[index]
            text = _args_text(delta.args_delta)
            return [ToolArgsChunk(call_id, name, text)] if text else []
        return []

    def _end(self, index: int, part: object) -> list[StreamPart]:
        if isinstance(part, ThinkingPart):
            return [
                ThinkingBlock(
                    Thinking(
                        part.content,
                        signature=part.signature,
                        provider=part.provider_name or self.provider,
                        id=part.id,
                    )
                )
            ]
        if isinstance(part, ToolCallPart):
            known = self._calls.pop(index, None)
            call_id = known[0] if known is not None else self._unique(part.tool_call_id)
            return [ToolCallChunk(ToolCall(call_id, part.tool_name, _args_dict(part)))]
        return []


def _args_text(args: str | dict[str, Any] | None) -> str:
    if args is None:
        return ""
    return args if isinstance(args, str) else json.dumps(args)


def _args_dict(part: ToolCallPart) -> dict[str, Any]:
    """The call's arguments; arguments that are not a JSON object reach the tool
    as one ``_raw`` field, which it refuses with a message the model can act on."""
    try:
        return part.args_as_dict()
    except (ValueError, TypeError, AssertionError):
        return {"_raw": _args_text(part.args)}
