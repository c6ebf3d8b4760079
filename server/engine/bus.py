"""The in-process event bus.

Two kinds of consumer:
- sinks (the transcript recorder, a run's history) are called inline and see
  every event: they must not lose one, and they are quick;
- subscriptions (WebSocket connections, the CLI printer, notifications) each
  get a bounded queue. Publishing never waits for them: consecutive deltas of
  a stream (text, thinking, a tool call's arguments) merge in the queue, and a
  subscriber that still falls ``limit`` events behind is marked lagged and
  closed, to resubscribe from history.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable
from typing import Final

import anyio

from server.core.events import Event, StreamDelta

Sink = Callable[[Event], None]
ALL_RUNS: Final = "*"
DEFAULT_LIMIT: Final = 1000


class SubscriberLagged(Exception):
    """The subscriber fell too far behind; what it missed is in the run's history."""


class Subscription:
    def __init__(self, bus: EventBus, run_ids: set[str], limit: int) -> None:
        self._bus = bus
        self.run_ids = run_ids
        self._limit = limit
        self._items: deque[Event] = deque()
        # The pieces of the last queued delta's stream, joined when received: a
        # subscriber far behind would otherwise cost a copy of the whole text per delta.
        self._pieces: list[str] = []
        self._wakeup = anyio.Event()
        self.lagged = False
        self.closed = False

    def wants(self, event: Event) -> bool:
        return ALL_RUNS in self.run_ids or event.run_id in self.run_ids

    def offer(self, event: Event) -> None:
        """Queue ``event`` without ever blocking the publisher."""
        if self.closed:
            return
        items = self._items
        if isinstance(event, StreamDelta) and items:
            last = items[-1]
            if isinstance(last, StreamDelta) and last.merge_key() == event.merge_key():
                if not self._pieces:
                    self._pieces = [last.text]
                self._pieces.append(event.text)
                items[-1] = event  # its seq and time stand for the merged whole
                self._wakeup.set()
                return
        self._settle()
        if len(items) >= self._limit:
            # What it missed is in the run's history; a partial tail would only mislead.
            self.lagged = True
            items.clear()
            self._pieces = []
            self.close()
            return
        items.append(event)
        self._wakeup.set()

    def _settle(self) -> None:
        if self._pieces:
            last = self._items[-1]
            assert isinstance(last, StreamDelta)
            self._items[-1] = dataclasses.replace(last, text="".join(self._pieces))
            self._pieces = []

    def push_history(self, events: list[Event]) -> None:
        """Queue a run's past events ahead of its next live one, whatever the limit."""
        if events and not self.closed:
            self._settle()
            self._items.extend(events)
            self._wakeup.set()

    async def receive(self) -> list[Event]:
        """Everything queued (at least one event); raises when closed and drained."""
        while not self._items:
            if self.lagged:
                raise SubscriberLagged("subscriber fell behind and was dropped")
            if self.closed:
                raise anyio.EndOfStream
            await self._wakeup.wait()
            self._wakeup = anyio.Event()
        self._settle()
        batch = list(self._items)
        self._items.clear()
        return batch

    def close(self) -> None:
        self.closed = True
        self._bus.unsubscribe(self)
        self._wakeup.set()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventBus:
    def __init__(self) -> None:
        self._sinks: list[Sink] = []
        self._subscriptions: list[Subscription] = []

    def add_sink(self, sink: Sink) -> None:
        self._sinks.append(sink)

    def remove_sink(self, sink: Sink) -> None:
        if sink in self._sinks:
            self._sinks.remove(sink)

    def subscribe(
        self, run_ids: set[str] | None = None, *, limit: int = DEFAULT_LIMIT
    ) -> Subscription:
        # An empty set is a subscription to nothing yet, not to everything.
        sub = Subscription(self, {ALL_RUNS} if run_ids is None else set(run_ids), limit)
        self._subscriptions.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subscriptions:
            self._subscriptions.remove(sub)

    def publish(self, event: Event) -> None:
        for sink in list(self._sinks):
            sink(event)
        for sub in list(self._subscriptions):
            if sub.wants(event):
                sub.offer(event)
