"""The reply streamer: a burst of pieces is merged per stream, nothing is lost
or reordered, and a failure mid-stream reaches the loop."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence
from types import TracebackType
from typing import Self

import anyio
import anyio.lowlevel
import pytest

from server.core.events import Event, Notice, TextDelta, ToolCallDelta, UsageReported
from server.core.settings import BudgetSettings
from server.engine.bus import EventBus
from server.engine.channel import RunChannel
from server.engine.guards import Budget, HardStop
from server.engine.reply import GATHER_SECONDS, ReplyStreamer
from server.providers.base import (
    Message,
    ProviderError,
    StreamPart,
    TextChunk,
    ToolArgsChunk,
    ToolCall,
    ToolCallChunk,
    ToolSpec,
    Usage,
    UsageChunk,
)


class _Connectionless:
    """What a provider is besides its stream: these need no connection to open."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None


class Burst(_Connectionless):
    """A provider that says everything at once, with no pause between pieces."""

    name = "burst"
    reported_window = None

    def __init__(
        self, parts: list[StreamPart], *, then_fail: bool = False, pause: float = 0.0
    ) -> None:
        self.parts = parts
        self.then_fail = then_fail
        self.pause = pause  # between two pieces: a model's pace

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system: str = ""
    ) -> AsyncGenerator[StreamPart, None]:
        for n, part in enumerate(self.parts):
            if n and self.pause:
                await anyio.sleep(self.pause)
            yield part
        if self.then_fail:
            raise ProviderError("the stream broke")


def _streamer(provider: Burst) -> tuple[ReplyStreamer, list[Event]]:
    seen: list[Event] = []
    channel = RunChannel("r1", EventBus(), [seen.append])
    budget = Budget(BudgetSettings(), "burst:model")
    return ReplyStreamer(provider, "r1", channel, budget), seen


def _reply(streamer: ReplyStreamer) -> object:
    async def go() -> object:
        return await streamer.reply(1, [], [], "")

    return anyio.run(go)


def test_a_burst_is_merged_per_stream_in_order() -> None:
    words = [TextChunk(f"word{i} ") for i in range(500)]
    args = [ToolArgsChunk("c1", "read_file", '{"path": '), ToolArgsChunk("c1", "read_file", '"a"}')]
    other = [ToolArgsChunk("c2", "read_file", '{"path": "b"}')]
    call = ToolCallChunk(ToolCall("c1", "read_file", {"path": "a"}))
    usage = UsageChunk(Usage(input_tokens=10, output_tokens=500))
    streamer, seen = _streamer(Burst([*words, *args, *other, call, usage]))

    message = _reply(streamer)

    text = "".join(e.text for e in seen if isinstance(e, TextDelta))
    assert text == "".join(w.text for w in words)
    assert message.text == text  # type: ignore[attr-defined]
    # Gathered, not one event per piece: a fast model costs a few events, not 500.
    assert len([e for e in seen if isinstance(e, TextDelta)]) < 50
    deltas = [e for e in seen if isinstance(e, ToolCallDelta)]
    by_call = {d.call_id: "" for d in deltas}
    for d in deltas:
        by_call[d.call_id] += d.text
    assert by_call == {"c1": '{"path": "a"}', "c2": '{"path": "b"}'}
    # The order of the streams holds: text, then c1's arguments, then c2's, then usage.
    kinds = [type(e).__name__ + getattr(e, "call_id", "") for e in seen]
    firsts = [kinds.index(k) for k in ("TextDelta", "ToolCallDeltac1", "ToolCallDeltac2",
                                       "UsageReported")]
    assert firsts == sorted(firsts)
    assert message.tool_calls == (call.call,)  # type: ignore[attr-defined]
    assert [e.output_tokens for e in seen if isinstance(e, UsageReported)] == [500]


def test_at_a_slow_pace_each_piece_is_shown_as_it_comes() -> None:
    words = [TextChunk(f"word{i} ") for i in range(3)]
    streamer, seen = _streamer(Burst(words, pause=10 * GATHER_SECONDS))
    _reply(streamer)
    assert [e.text for e in seen if isinstance(e, TextDelta)] == [w.text for w in words]


def test_at_a_fast_pace_there_is_at_most_one_delta_a_frame() -> None:
    words = [TextChunk(f"word{i} ") for i in range(60)]
    streamer, seen = _streamer(Burst(words, pause=GATHER_SECONDS / 8))
    started = time.monotonic()
    _reply(streamer)
    took = time.monotonic() - started
    deltas = [e.text for e in seen if isinstance(e, TextDelta)]
    assert "".join(deltas) == "".join(w.text for w in words)
    assert 1 < len(deltas) <= took / GATHER_SECONDS + 1


def test_a_failure_mid_stream_reaches_the_loop_after_what_was_shown() -> None:
    streamer, seen = _streamer(Burst([TextChunk("half "), TextChunk("said ")], then_fail=True))
    with pytest.raises(ProviderError, match="the stream broke"):
        _reply(streamer)
    # What was shown before the break stays shown (the loop marks the turn).
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "half said "
    # No usage: no notice is owed for a failed turn, and nothing was invented.
    assert not [e for e in seen if isinstance(e, UsageReported)]


def test_no_usage_is_said_once_per_run() -> None:
    streamer, seen = _streamer(Burst([TextChunk("hi")]))
    _reply(streamer)
    _reply(streamer)
    notices = [e for e in seen if isinstance(e, Notice)]
    assert len(notices) == 1
    assert "reports no token usage" in notices[0].text


class Endless(_Connectionless):
    """A provider that talks on and on, a piece per turn of the event loop (up
    to a bound, so that a reply that fails to stop it fails its test rather than
    hangs it); it notes when its stream is closed."""

    bound = 20_000

    name = "endless"
    reported_window: int | None = None

    def __init__(self, first: list[StreamPart]) -> None:
        self.first = first
        self.pieces = 0
        self.closed = anyio.Event()

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system: str = ""
    ) -> AsyncGenerator[StreamPart, None]:
        try:
            for part in self.first:
                yield part
            while self.pieces < self.bound:
                self.pieces += 1
                yield TextChunk("more ")
                await anyio.lowlevel.checkpoint()  # what an SDK does between pieces
        finally:
            self.closed.set()


@pytest.mark.anyio
async def test_a_cancel_of_the_run_stops_the_streaming_reply_at_once() -> None:
    # The reader of the stream sits in a shielded scope (cheaper checkpoints):
    # the reply itself must carry a cancel of the run to it.
    provider = Endless([TextChunk("hello ")])
    run = anyio.CancelScope()

    def cancel_on_first_text(event: Event) -> None:
        if isinstance(event, TextDelta):
            run.cancel()

    channel = RunChannel("r1", EventBus(), [cancel_on_first_text])
    streamer = ReplyStreamer(provider, "r1", channel, Budget(BudgetSettings(), "endless:model"))
    with anyio.move_on_after(30) as guard:
        with run:
            await streamer.reply(1, [], [], "")
    assert run.cancelled_caught and not guard.cancelled_caught
    assert provider.closed.is_set() and provider.pieces < provider.bound
    pieces = provider.pieces
    await anyio.sleep(0.05)
    assert provider.pieces == pieces  # nothing reads it any more


@pytest.mark.anyio
async def test_a_hard_stop_mid_stream_stops_the_reader() -> None:
    usage = UsageChunk(Usage(input_tokens=90, output_tokens=20))
    provider = Endless([TextChunk("hello "), usage])
    budget = Budget(BudgetSettings(max_tokens=100), "endless:model")
    streamer = ReplyStreamer(provider, "r1", RunChannel("r1", EventBus()), budget)
    with anyio.move_on_after(30) as guard, pytest.raises(HardStop, match="budget exceeded"):
        await streamer.reply(1, [], [], "")
    assert not guard.cancelled_caught and provider.closed.is_set()
    assert provider.pieces < provider.bound
