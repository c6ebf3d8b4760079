"""A conversation's messages: the ones its earlier runs recorded, then this
run's, each recorded as it joins (``message_added``), so that a follow-up can
start from the whole history, and a request can be shown as it was sent."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from server.core.events import Event, MessageAdded, RunStarted, TextDelta
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
    def __init__(self, channel: RunChannel, history: Sequence[Message] = ()) -> None:
        self._channel = channel
        self.messages: list[Message] = list(history)
        self.carried = len(self.messages)  # how many came from earlier runs

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


def messages_of(events: Iterable[Event]) -> list[Message]:
    """The messages one run added, in order. A transcript from before messages
    were recorded gives its task and its text: all there is to go on."""
    added: list[Message] = []
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
        elif isinstance(event, RunStarted):
            task = event.task
        elif isinstance(event, TextDelta):
            text.append(event.text)
    if recorded:
        return added
    older: list[Message] = [UserMessage(task)] if task else []
    if text:
        older.append(AssistantMessage("".join(text)))
    return older


def load_history(transcripts: Iterable[Path]) -> list[Message]:
    """The conversation so far, from its runs' transcripts, oldest first, made fit
    to continue (see ``complete_calls``)."""
    messages: list[Message] = []
    for path in transcripts:
        if path.exists():
            events = (e for e in read_transcript(path) if not isinstance(e, BadLine))
            messages.extend(messages_of(events))
    return complete_calls(messages)


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
