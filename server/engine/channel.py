"""A run's event channel: stamps each event with the run's next ``seq`` and the
time, hands it to the run's own sinks (transcript, history), then to the bus."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from server.core.events import Event, StreamDelta
from server.engine.bus import EventBus


class RunHistory:
    """The events of a live run, with consecutive deltas of a stream merged, so that a
    client connecting mid-run can be brought up to date without a long replay."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        events = self.events
        if isinstance(event, StreamDelta) and events:
            last = events[-1]
            if isinstance(last, StreamDelta) and last.merge_key() == event.merge_key():
                events[-1] = last.merged(event)
                return
        events.append(event)


class RunChannel:
    def __init__(
        self, run_id: str, bus: EventBus, sinks: Sequence[Callable[[Event], None]] = ()
    ) -> None:
        self.run_id = run_id
        self._bus = bus
        self._sinks = list(sinks)
        self.seq = 0

    def emit(self, event: Event) -> Event:
        if event.run_id != self.run_id:
            raise ValueError(f"event of run {event.run_id} sent on the channel of {self.run_id}")
        self.seq += 1
        event.seq = self.seq
        event.ts = time.time()
        for sink in self._sinks:
            sink(event)
        self._bus.publish(event)
        return event
