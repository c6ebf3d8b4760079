"""The run's context meter, kept in step with the conversation and told to
every surface as ``context_updated``."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

from server.core.events import ContextUpdated
from server.core.settings import ContextSettings
from server.engine.channel import RunChannel
from server.engine.compaction import message_chars
from server.engine.context_meter import ContextMeter
from server.providers.base import Message, ToolSpec, Usage, UserMessage


class ContextTracker:
    def __init__(
        self,
        channel: RunChannel,
        settings: ContextSettings,
        *,
        system: str,
        specs: Sequence[ToolSpec],
        window: int | None,
        memory_chars: int = 0,
    ) -> None:
        self._channel = channel
        tools = json.dumps([dataclasses.asdict(spec) for spec in specs])
        # The memory block ends the system prompt: counted as memory, not twice.
        self.meter = ContextMeter(
            window or 0, prompt_chars=len(system) - memory_chars, tools_chars=len(tools)
        )
        self.meter.memory_chars = memory_chars
        # Never more than a quarter of the window: a small local model must keep room to work.
        self.reserve = min(settings.reserve_tokens, window // 4) if window else 0
        self.compact_chars = settings.compact_chars
        self._sent_chars = 0
        # What the last compaction left: compacting again needs new material, or
        # a tail that alone passes a limit would be compacted at every turn.
        self._floor = 0

    def count(self, messages: Sequence[Message]) -> None:
        """Start over from these messages (a run's start, a compaction)."""
        self.meter.transcript_chars = sum(message_chars(m) for m in messages)
        self.meter.attachments_chars = sum(_attachment_bytes(m) for m in messages)

    def added(self, message: Message) -> None:
        self.meter.transcript_chars += message_chars(message)
        self.meter.attachments_chars += _attachment_bytes(message)

    def request_sent(self) -> None:
        self._sent_chars = self.meter.total_chars()

    def measured(self, usage: Usage) -> None:
        """The provider's prompt size of the request last sent."""
        if usage.context_tokens > 0:
            self.meter.measure(usage.context_tokens, self._sent_chars)

    def compacted(self, messages: Sequence[Message]) -> None:
        self.count(messages)
        self.meter.forget_measure()  # that figure was of a request that is gone
        self._floor = self.meter.transcript_chars

    def reason_to_compact(self) -> str | None:
        meter = self.meter
        grown = meter.transcript_chars - self._floor
        if self._floor and grown < max(self.compact_chars // 4, self.reserve):
            return None
        if meter.should_compact(self.reserve):
            return (
                f"the next request (about {meter.tokens():,} tokens) would pass the "
                f"compaction point ({meter.max_tokens - self.reserve:,} of a "
                f"{meter.max_tokens:,}-token window)"
            )
        if meter.transcript_chars > self.compact_chars:
            return f"the conversation passed {self.compact_chars:,} characters"
        return None

    @property
    def summary_limit(self) -> int:
        """Characters a summary may take: a small part of what triggers a compaction."""
        return max(500, min(6_000, self.compact_chars // 10))

    def emit(self, turn: int) -> None:
        self._channel.emit(
            ContextUpdated(
                run_id=self._channel.run_id, turn=turn, **self.meter.figures(self.reserve)
            )
        )


# An image costs the model about 1,600 tokens whatever its bytes (the vendors
# scale large ones down): counted as the characters that many tokens make.
IMAGE_CHARS = 6_400


def _attachment_bytes(message: Message) -> int:
    if not isinstance(message, UserMessage):
        return 0
    return sum(
        IMAGE_CHARS if a.is_image and a.data else len(a.data) for a in message.attachments
    )
