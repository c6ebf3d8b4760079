"""One model response, streamed to the surfaces as it comes and gathered
into the message that joins the conversation.

A task of its own reads the provider's stream into a queue, and the reply
takes what has arrived in batches, at most one every ``GATHER_SECONDS`` (a
frame of a 60 Hz screen: a delta sent sooner would show no sooner).
A piece that comes after a longer pause is shown the moment it comes; pieces
that come faster (a fast local model, a burst from the network, a cloud model
at 100 tokens a second) wait for the rest of the frame and are merged per
stream into one delta: each event costs a transcript line and a trip to every
surface, and a fast model must not be slowed down by them."""

from __future__ import annotations

import math
import time
from collections import deque
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import anyio

from server.core.events import (
    Notice,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    TurnDiscarded,
    UsageReported,
)
from server.engine.channel import RunChannel
from server.engine.guards import Budget
from server.providers.base import (
    AssistantMessage,
    Message,
    ResponseDiscarded,
    RetryNotice,
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

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

    from server.providers.base import Provider

GATHER_SECONDS: Final = 0.016


@dataclass(frozen=True)
class _Failed:
    error: Exception


@dataclass
class _Gathered:
    """What the response has said so far."""

    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    thinking: list[Thinking] = field(default_factory=list)
    usage_seen: bool = False


class _Inbox:
    """What the reader has read and the reply has not taken yet: a deque, and a
    wake-up paid only when the reply is waiting (not per piece)."""

    def __init__(self) -> None:
        self.items: deque[StreamPart | _Failed] = deque()
        self.closed = False
        self.waiting = False
        self._arrived = anyio.Event()

    def wake(self) -> None:
        self.waiting = False
        self._arrived.set()

    def close(self) -> None:
        self.closed = True
        self.wake()

    async def wait(self) -> None:
        """Until something is there (or the reader is done)."""
        while not self.items and not self.closed:
            self._arrived = anyio.Event()
            self.waiting = True
            await self._arrived.wait()


async def _read(
    parts: AsyncGenerator[StreamPart, None], inbox: _Inbox, scope: anyio.CancelScope
) -> None:
    # The scope is shielded: the model's SDK checks for a cancel at every piece
    # (anyio walks the scopes up to the first shield), and a reader nested in the
    # run's scopes walks them all each time. The reply cancels this scope when it
    # ends, for whatever reason: a cancel of the run still stops the reader at once.
    with scope:
        items = inbox.items
        try:
            async for part in parts:
                items.append(part)
                if inbox.waiting:
                    inbox.wake()
        except Exception as exc:  # handed over: raised where the reply is read
            items.append(_Failed(exc))
        finally:
            inbox.close()


@dataclass
class ReplyStreamer:
    provider: Provider
    run_id: str
    channel: RunChannel
    budget: Budget
    usage_missing_told: bool = False
    last_usage: Usage | None = None  # of the last response, when it reported any

    async def reply(
        self, turn: int, messages: list[Message], specs: list[ToolSpec], system: str
    ) -> AssistantMessage:
        gathered = _Gathered()
        inbox = _Inbox()
        self.last_usage = None
        failure: Exception | None = None
        stream = self.provider.stream(messages, specs, system)
        reading = anyio.CancelScope(shield=True)
        async with aclosing(stream) as parts, anyio.create_task_group() as tg:
            tg.start_soon(_read, parts, inbox, reading)
            try:
                await self._consume(inbox, turn, gathered)
            except Exception as exc:  # a hard stop, a failed model: past the task group
                failure = exc
            finally:  # a cancel of the run too: the reader is shielded from it
                reading.cancel()
        if failure is not None:
            raise failure
        if not gathered.usage_seen and not self.usage_missing_told:
            self.usage_missing_told = True
            self.channel.emit(
                Notice(
                    run_id=self.run_id,
                    turn=turn,
                    text=f"{self.provider.name} reports no token usage: this run's "
                    "tokens and cost are not counted",
                )
            )
        return AssistantMessage(
            "".join(gathered.text), tuple(gathered.calls), tuple(gathered.thinking)
        )

    async def _consume(self, inbox: _Inbox, turn: int, gathered: _Gathered) -> None:
        last = -math.inf
        while True:
            await inbox.wait()
            if not inbox.items:
                return  # the reader is done
            early = last + GATHER_SECONDS - time.monotonic()
            if early > 0:
                await anyio.sleep(early)
            batch = list(inbox.items)
            inbox.items.clear()
            last = time.monotonic()
            self._take(batch, turn, gathered)

    def _take(self, batch: list[StreamPart | _Failed], turn: int, gathered: _Gathered) -> None:
        """Emit what a batch says, the consecutive pieces of one stream as one delta."""
        run_id, emit = self.run_id, self.channel.emit
        index, size = 0, len(batch)
        while index < size:
            part = batch[index]
            if isinstance(part, _Failed):
                raise part.error
            if isinstance(part, TextChunk | ThinkingChunk | ToolArgsChunk):
                # The run of pieces of this stream: the loop every piece of a fast
                # model passes through, so no call in it.
                kind, end = part.__class__, index + 1
                while end < size and batch[end].__class__ is kind:
                    if kind is ToolArgsChunk and batch[end].call_id != part.call_id:  # type: ignore[union-attr]
                        break
                    end += 1
                text = "".join([p.text for p in batch[index:end]])  # type: ignore[union-attr]
                index = end
                if isinstance(part, TextChunk):
                    gathered.text.append(text)
                    emit(TextDelta(run_id=run_id, turn=turn, text=text))
                elif isinstance(part, ThinkingChunk):
                    emit(ThinkingDelta(run_id=run_id, turn=turn, text=text))
                else:
                    emit(ToolCallDelta(run_id=run_id, turn=turn, call_id=part.call_id,
                                       tool=part.tool, text=text))
                continue
            index += 1
            if isinstance(part, ThinkingBlock):
                gathered.thinking.append(part.thinking)
            elif isinstance(part, ToolCallChunk):
                gathered.calls.append(part.call)
            elif isinstance(part, UsageChunk):
                gathered.usage_seen = True
                self.last_usage = part.usage
                cost = self.budget.cost_of(part.usage)
                emit(UsageReported(run_id=run_id, turn=turn, cost_usd=cost, **part.usage.__dict__))
                self.budget.spend(part.usage, cost)
            elif isinstance(part, RetryNotice):
                emit(Notice(run_id=run_id, turn=turn, text=part.text))
            elif isinstance(part, ResponseDiscarded):
                gathered.text.clear()
                gathered.calls.clear()
                gathered.thinking.clear()
                emit(TurnDiscarded(run_id=run_id, turn=turn, reason=part.reason))
