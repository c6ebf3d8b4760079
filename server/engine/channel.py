"""A run's event channel: redacts each event (no key leaves the process),
stamps it with the run's next ``seq`` and the time, hands it to the run's own
sinks (transcript, history), then to the bus.

Streamed deltas are held back at their end until a whitespace (or until
another event of the run comes), so that a key split across two deltas is
redacted whole; what a surface sees of a stream is at most one word late."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from server.core.events import Event, StreamDelta
from server.core.redaction import StreamRedactor, redact, redact_value
from server.engine.bus import EventBus


class RunHistory:
    """The events of a live run, with consecutive deltas of a stream merged, so that a
    client connecting mid-run can be brought up to date without a long replay. The
    pieces of the stream being merged are joined when the history is read: joining
    at every delta would copy the whole text each time."""

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._pieces: list[str] = []  # the merged text of the last event, when it is a delta

    def __call__(self, event: Event) -> None:
        events = self._events
        if isinstance(event, StreamDelta) and events:
            last = events[-1]
            if isinstance(last, StreamDelta) and last.merge_key() == event.merge_key():
                if not self._pieces:
                    self._pieces = [last.text]
                self._pieces.append(event.text)
                events[-1] = event  # its seq and time stand for the merged whole
                return
        self._settle()
        events.append(event)

    def _settle(self) -> None:
        if self._pieces:
            last = self._events[-1]
            assert isinstance(last, StreamDelta)
            self._events[-1] = dataclasses.replace(last, text="".join(self._pieces))
            self._pieces = []

    @property
    def events(self) -> list[Event]:
        self._settle()
        return self._events


def redact_event(event: Event) -> None:
    """Redact every text an event carries, in place."""
    for field in dataclasses.fields(event):
        value: Any = getattr(event, field.name)
        if isinstance(value, str):
            cleaned = redact(value)
            if cleaned is not value and cleaned != value:
                setattr(event, field.name, cleaned)
        elif isinstance(value, dict | list):
            setattr(event, field.name, redact_value(value))


class RunChannel:
    def __init__(
        self, run_id: str, bus: EventBus, sinks: Sequence[Callable[[Event], None]] = ()
    ) -> None:
        self.run_id = run_id
        self._bus = bus
        self._sinks = list(sinks)
        self.seq = 0
        # Per stream: what is held back of it, and its last delta (the shape to send it in).
        self._held: dict[tuple[object, ...], tuple[StreamRedactor, StreamDelta]] = {}

    def emit(self, event: Event) -> Event:
        if event.run_id != self.run_id:
            raise ValueError(f"event of run {event.run_id} sent on the channel of {self.run_id}")
        if isinstance(event, StreamDelta):
            return self._stream(event)
        self._flush_all()
        redact_event(event)
        return self._send(event)

    def _stream(self, delta: StreamDelta) -> Event:
        key = delta.merge_key()
        for other in [k for k in self._held if k != key]:
            self._flush(other)
        redactor = self._held[key][0] if key in self._held else StreamRedactor()
        self._held[key] = (redactor, delta)
        safe = redactor.feed(delta.text)
        if safe and safe != delta.text:
            delta.text = safe  # not sent yet, so not seen yet: no copy needed
        if safe:
            return self._send(delta)
        return delta

    def _flush(self, key: tuple[object, ...]) -> None:
        redactor, last = self._held.pop(key)
        rest = redactor.flush()
        if rest:
            self._send(dataclasses.replace(last, text=rest))

    def _flush_all(self) -> None:
        for key in list(self._held):
            self._flush(key)

    def _send(self, event: Event) -> Event:
        self.seq += 1
        event.seq = self.seq
        event.ts = time.time()
        for sink in self._sinks:
            sink(event)
        self._bus.publish(event)
        return event
