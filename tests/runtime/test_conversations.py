"""A run no longer ends the conversation: a follow-up starts from the whole
history, in the same session, whatever way the last run ended."""

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from server.core.events import ContextAssembled, MessageAdded, ModelRequested, RunStarted
from server.core.paths import Paths
from server.engine.bus import EventBus
from server.engine.conversation import NOT_RUN
from server.engine.store import Store
from server.engine.transcript import BadLine, read_transcript
from server.providers.base import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
)
from server.providers.codec import message_from_dict
from server.providers.scripted import ScriptedProvider, ScriptedToolCall, ScriptedTurn
from server.runtime.runs import RunManager, RunRequest, RunRequestError

pytestmark = pytest.mark.anyio


class Recorder:
    """A scripted model that keeps every conversation it was sent."""

    def __init__(self, *turns: ScriptedTurn) -> None:
        self.turns = list(turns)
        self.seen: list[list[Message]] = []

    def provider(self) -> ScriptedProvider:
        def next_turn(messages: Sequence[Message]) -> ScriptedTurn:
            self.seen.append(list(messages))
            return self.turns.pop(0)

        return ScriptedProvider(next_turn)


async def _finished(runs: RunManager, run_id: str) -> str:
    info = await runs.wait(run_id)
    assert info is not None
    return info.status


async def test_each_follow_up_sends_the_whole_history(paths: Paths, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    model = Recorder(
        ScriptedTurn("Let me look.", (ScriptedToolCall("read_file", {"path": "notes.txt"}),)),
        ScriptedTurn("It says hello."),
        ScriptedTurn("Yes, one line."),
        ScriptedTurn("You asked two things."),
    )
    async with RunManager(paths=paths, store=Store(paths.database), bus=EventBus()) as runs:
        asked = "What is in notes.txt?"
        first = runs.start(RunRequest(str(workspace), asked, provider=model.provider()))
        assert await _finished(runs, first.id) == "completed"
        second = runs.start(
            RunRequest("", "Only one line?", continue_from=first.id, provider=model.provider())
        )
        assert await _finished(runs, second.id) == "completed"
        third = runs.start(
            RunRequest("", "What did I ask?", continue_from=second.id, provider=model.provider())
        )
        assert await _finished(runs, third.id) == "completed"
        infos = [runs.get(r.id) for r in (first, second, third)]

    assert len({i.session_id for i in infos if i}) == 1
    last = model.seen[-1]
    assert [type(m).__name__ for m in last] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
    ]
    assert [m.text for m in last if isinstance(m, UserMessage)] == [
        "What is in notes.txt?",
        "Only one line?",
        "What did I ask?",
    ]
    result = last[2]
    assert isinstance(result, ToolResultMessage) and "hello" in result.content

    # The third run's transcript says where it stands in the conversation.
    assert third.transcript
    events = [e for e in read_transcript(Path(third.transcript)) if not isinstance(e, BadLine)]
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.continues == second.id and started.session_id == first.session_id
    assembled = next(e for e in events if isinstance(e, ContextAssembled))
    assert assembled.history == 6 and "You are Sparrow" in assembled.system
    added = [e for e in events if isinstance(e, MessageAdded)]
    assert [e.index for e in added] == [6, 7]
    assert message_from_dict(added[0].message) == UserMessage("What did I ask?")
    requested = next(e for e in events if isinstance(e, ModelRequested))
    assert requested.messages == 7


async def test_a_follow_up_after_a_cancel_mid_batch_answers_the_calls_that_never_ran(
    paths: Paths, workspace: Path
) -> None:
    model = Recorder(
        ScriptedTurn(
            "Two commands.",
            (
                ScriptedToolCall("run_shell", {"command": "sleep 30"}),
                ScriptedToolCall("run_shell", {"command": "echo second"}),
            ),
        ),
        ScriptedTurn("Understood."),
    )
    async with RunManager(paths=paths, store=Store(paths.database), bus=EventBus()) as runs:
        first = runs.start(RunRequest(str(workspace), "run both", provider=model.provider()))
        _, subscription = runs.follow(first.id)
        with anyio.fail_after(20), subscription:
            while not any(e.type == "tool_requested" for e in await subscription.receive()):
                pass
        runs.cancel(first.id)
        assert await _finished(runs, first.id) == "cancelled"
        second = runs.start(
            RunRequest("", "never mind", continue_from=first.id, provider=model.provider())
        )
        assert await _finished(runs, second.id) == "completed"

    sent = model.seen[-1]
    assistant = sent[1]
    assert isinstance(assistant, AssistantMessage) and len(assistant.tool_calls) == 2
    results = [m for m in sent if isinstance(m, ToolResultMessage)]
    assert [r.call_id for r in results] == [c.id for c in assistant.tool_calls]
    assert all(r.content == NOT_RUN and not r.ok for r in results)
    assert sent[-1] == UserMessage("never mind")


async def test_a_follow_up_is_refused_while_the_conversation_runs_or_elsewhere(
    paths: Paths, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    slow = ScriptedProvider([ScriptedTurn("one two three four")], chunk_delay=5)
    async with RunManager(paths=paths, store=Store(paths.database), bus=EventBus()) as runs:
        first = runs.start(RunRequest(str(workspace), "slow", provider=slow))
        with pytest.raises(RunRequestError, match="still running"):
            runs.start(RunRequest("", "more", continue_from=first.id))
        runs.cancel(first.id)
        await runs.wait(first.id)
        with pytest.raises(RunRequestError, match="cannot move it"):
            runs.start(RunRequest(str(other), "more", continue_from=first.id))
        same = runs.start(RunRequest(str(workspace), "more", continue_from=first.id, model="demo"))
        assert same.session_id == first.session_id
        await runs.wait(same.id)
