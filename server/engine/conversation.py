"""A conversation's messages: the ones its earlier runs recorded, then this
run's, each recorded as it joins (``message_added``), so that a follow-up can
start from the whole history, and a request can be shown as it was sent."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from server.core.events import (
    Compacted,
    ContextAssembled,
    Event,
    MessageAdded,
    ModelRequested,
    RunStarted,
    TextDelta,
)
from server.engine.channel import RunChannel
from server.engine.transcript import BadLine, read_transcript
from server.providers.base import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
)
from server.providers.codec import MessageDecodeError, message_from_dict, message_to_dict

NOT_RUN = "not run: the run ended before this call ran"


class Conversation:
    def __init__(
        self,
        channel: RunChannel,
        history: Sequence[Message] = (),
        on_add: Callable[[Message], None] | None = None,
    ) -> None:
        self._channel = channel
        self.messages: list[Message] = list(history)
        self.carried = len(self.messages)  # how many came from earlier runs
        self._on_add = on_add

    def __len__(self) -> int:
        return len(self.messages)

    def add(self, message: Message) -> None:
        self._channel.emit(
            MessageAdded(
                run_id=self._channel.run_id,
                index=len(self.messages),
                message=message_to_dict(message),
            )
        )
        self.messages.append(message)
        if self._on_add is not None:
            self._on_add(message)

    def replace(self, messages: Sequence[Message]) -> None:
        """After a compaction: the ``compacted`` event records the new list."""
        self.messages = list(messages)


def messages_of(events: Iterable[Event]) -> list[Message]:
    """The messages one run added, in order. A transcript from before messages
    were recorded gives its task and its text: all there is to go on."""
    return following([], events)


def following(before: Sequence[Message], events: Iterable[Event]) -> list[Message]:
    """The conversation after one run's events, from what it held before: the
    messages the run added, and a compaction's whole new list where it made one."""
    added: list[Message] = list(before)
    task = ""
    text: list[str] = []
    recorded = False
    for event in events:
        if isinstance(event, MessageAdded):
            recorded = True
            try:
                added.append(message_from_dict(event.message))
            except MessageDecodeError:
                continue
        elif isinstance(event, Compacted):
            recorded = True
            added = _decoded(event.messages)
        elif isinstance(event, ContextAssembled):
            recorded = True  # messages were recorded by then (a run may add none: /compact)
        elif isinstance(event, RunStarted):
            task = event.task
        elif isinstance(event, TextDelta):
            text.append(event.text)
    if recorded:
        return added
    older: list[Message] = [*before, UserMessage(task)] if task else list(before)
    if text:
        older.append(AssistantMessage("".join(text)))
    return older


def _decoded(raw: Iterable[dict[str, Any]]) -> list[Message]:
    messages = []
    for item in raw:
        try:
            messages.append(message_from_dict(item))
        except MessageDecodeError:
            continue
    return messages


def _events(path: Path) -> list[Event]:
    if not path.exists():
        return []
    return [e for e in read_transcript(path) if not isinstance(e, BadLine)]


def request_of(earlier: Sequence[Path], transcript: Path, turn: int) -> dict[str, Any] | None:
    """What a run sent to its model for ``turn``, rebuilt from the transcripts of
    the conversation's earlier runs and its own; None when it sent nothing then."""
    events = _events(transcript)
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    context = next((e for e in events if isinstance(e, ContextAssembled)), None)
    sent = [e for e in events if isinstance(e, ModelRequested) and e.turn == turn]
    if started is None or context is None or not sent:
        return None
    # The conversation as it stood when that request left (a compaction later
    # in the run changed it after).
    upto = events.index(sent[-1])
    messages = following(_raw_history(earlier), events[:upto])
    return {
        "model": started.model,
        "turn": turn,
        "attempt": sent[-1].attempt,
        "system": context.system,
        "tools": context.tools,
        "messages": [message_to_dict(m) for m in messages[: sent[-1].messages]],
    }


def load_history(transcripts: Iterable[Path]) -> list[Message]:
    """The conversation so far, from its runs' transcripts, oldest first, made fit
    to continue (see ``complete_calls``)."""
    return complete_calls(_raw_history(transcripts))


def _raw_history(transcripts: Iterable[Path]) -> list[Message]:
    messages: list[Message] = []
    for path in transcripts:
        messages = following(messages, _events(path))
    return messages


def complete_calls(messages: Sequence[Message]) -> list[Message]:
    """Every tool call answered: a run that ended mid-batch (a cancel, a hard
    stop, a crash) left calls without results, and every vendor refuses a
    conversation where a call has none. Each gets one saying it was not run."""
    out: list[Message] = []
    pending: dict[str, str] = {}

    def close_pending() -> None:
        for call_id, tool in pending.items():
            out.append(ToolResultMessage(call_id, tool, NOT_RUN, ok=False))
        pending.clear()

    for message in messages:
        if isinstance(message, ToolResultMessage):
            if message.call_id in pending:
                pending.pop(message.call_id)
                out.append(message)
            continue  # a result without its call cannot be sent
        close_pending()
        out.append(message)
        if isinstance(message, AssistantMessage):
            pending = {c.id: c.name for c in message.tool_calls}
    close_pending()
    return out
