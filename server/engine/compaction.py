"""Compacting a conversation (architecture.md): the middle summarised, the
first user message never dropped, the last ``COMPACT_KEEP_LAST`` messages kept
verbatim.

The summary is asked of the run's own model; a model that cannot summarise
(the demo, a scripted model) or fails to gets a deterministic extract of the
middle instead, so a compaction never fails a run. The summary joins the
first user message (a request must not open with two user messages in a
row), and the kept tail starts at an assistant message, so that no tool
result is kept without its call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Final

from server.providers.base import (
    AssistantMessage,
    Message,
    Provider,
    ProviderError,
    TextChunk,
    ToolResultMessage,
    Usage,
    UsageChunk,
    UserMessage,
)

COMPACT_KEEP_LAST: Final = 6
SUMMARY_HEADER: Final = "[Earlier in this conversation, summarised by Sparrow to fit the window]"
_EXTRACT_LIMIT: Final = 6_000  # characters of an extract: the gist, not the whole
_LINE: Final = 240
_SUMMARY_SYSTEM: Final = (
    "You summarise the middle of a coding agent's conversation so the agent can go on "
    "without it. Keep what the agent needs: the files it changed and how, decisions and "
    "their reasons, commands run and their results, errors met, what is left to do. "
    "Plain text, short lines, no preamble."
)


def message_chars(message: Message) -> int:
    """Characters of a message as the model reads it (attachments apart)."""
    if isinstance(message, AssistantMessage):
        calls = sum(len(c.name) + len(json.dumps(c.args)) for c in message.tool_calls)
        return len(message.text) + calls + sum(len(t.text) for t in message.thinking)
    if isinstance(message, ToolResultMessage):
        return len(message.content)
    return len(message.text)


@dataclass(frozen=True)
class Cut:
    first: int  # the first user message: kept
    start: int  # the first message summarised
    end: int  # the first message of the kept tail


def plan_cut(messages: Sequence[Message], keep_last: int = COMPACT_KEEP_LAST) -> Cut | None:
    """Where to cut, or None when nothing can be summarised."""
    first = next((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), None)
    if first is None:
        return None
    end = max(first + 1, len(messages) - keep_last)
    while end > first + 1 and not isinstance(messages[end], AssistantMessage):
        end -= 1
    if end <= first + 1 or end >= len(messages):
        return None
    return Cut(first, first + 1, end)


def render(messages: Sequence[Message]) -> list[str]:
    """The messages as short lines: what an extract or a summary request reads."""
    lines: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            lines.append(f"user: {_short(message.text)}")
        elif isinstance(message, AssistantMessage):
            if message.text.strip():
                lines.append(f"assistant: {_short(message.text)}")
            for call in message.tool_calls:
                lines.append(f"called {call.name} {_short(json.dumps(call.args))}")
        else:
            state = "ok" if message.ok else "failed"
            lines.append(f"{message.tool} {state}: {_short(message.content)}")
    return lines


def extract(messages: Sequence[Message], limit: int = _EXTRACT_LIMIT) -> str:
    """A deterministic summary: each message as a line, the newest kept when long."""
    lines = render(messages)
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        if size + len(line) > limit:
            kept.append(f"… ({len(lines) - len(kept)} earlier lines left out)")
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(reversed(kept))


async def summarise(
    provider: Provider, messages: Sequence[Message], limit: int = _EXTRACT_LIMIT
) -> tuple[str, str, Usage | None]:
    """(summary, by whom, what the model's call used): the model's, else an extract."""
    if not getattr(provider, "can_summarise", False):
        return extract(messages, limit), "extract", None
    request = UserMessage("Summarise this part of the conversation:\n\n" + "\n".join(
        render(messages)))
    text: list[str] = []
    usage: Usage | None = None
    try:
        async with aclosing(provider.stream([request], [], _SUMMARY_SYSTEM)) as parts:
            async for part in parts:
                if isinstance(part, TextChunk):
                    text.append(part.text)
                elif isinstance(part, UsageChunk):
                    usage = part.usage
    except ProviderError:
        return extract(messages, limit), "extract", usage
    summary = "".join(text).strip()
    if not summary:
        return extract(messages, limit), "extract", usage
    return summary, provider.name, usage


def compacted(messages: Sequence[Message], cut: Cut, summary: str) -> list[Message]:
    first = messages[cut.first]
    assert isinstance(first, UserMessage)
    joined = UserMessage(f"{first.text}\n\n{SUMMARY_HEADER}\n{summary}", first.attachments)
    return [*messages[: cut.first], joined, *messages[cut.end :]]


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _LINE else line[: _LINE - 1] + "…"
