"""What a fake vendor answers, in neutral terms: one ``Reply`` (streamed in
the endpoint's own format) or a failure, per request, in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Usage:
    input: int = 10  # uncached input
    cache_read: int = 0
    cache_write: int = 0
    output: int = 5


@dataclass(frozen=True)
class Call:
    name: str
    args: dict[str, Any]
    id: str = ""


@dataclass(frozen=True)
class Reply:
    text: str = ""
    thinking: str = ""
    calls: tuple[Call, ...] = ()
    usage: Usage | None = field(default_factory=Usage)  # None: the server sends none
    chunk: int = 4  # characters per text delta
    delay: float = 0.0  # seconds between events
    tokens: int = 0  # > 0: stream this many one-word deltas, as fast as possible


@dataclass(frozen=True)
class Failure:
    """An HTTP error before the stream, in the vendor's own shape."""

    status: int
    message: str = ""
    retry_after: float | None = None
    code: str = ""  # OpenAI's error code (e.g. context_length_exceeded)


@dataclass(frozen=True)
class Drop:
    """Send ``after`` events of ``reply``, then close the connection abruptly."""

    after: int
    reply: Reply = field(default_factory=lambda: Reply(text="Partial answer that never ends"))


@dataclass(frozen=True)
class Stall:
    """Send ``after`` events of ``reply``, then wait until the client goes away."""

    after: int
    reply: Reply = field(default_factory=lambda: Reply(text="Waiting for ever " * 5))


Step = Reply | Failure | Drop | Stall
