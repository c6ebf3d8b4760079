"""An agent's run is an ordinary conversation: a session, a transcript, the
file's settings, and a record of which agent started it."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.events import RunFinished, RunStarted
from server.core.paths import Paths
from server.engine.bus import EventBus
from server.engine.store import Store
from server.engine.transcript import read_transcript
from server.runtime.runs import RunManager, RunRequestError

pytestmark = pytest.mark.anyio


def write_agent(paths: Paths, name: str, front: str) -> None:
    paths.agents.mkdir(parents=True, exist_ok=True)
    (paths.agents / f"{name}.agent.md").write_text(f"---\n{front}---\nSay hello to the folder.\n")


async def test_an_agent_run_is_an_ordinary_conversation(paths: Paths, workspace: Path) -> None:
    write_agent(
        paths, "greeter",
        f"workspace: {workspace}\nmodel: demo\nmode: plan\nbudget:\n  max_tokens: 900000\n",
    )
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0) as runs:
        info = runs.agents.start("greeter", surface="web")
        done = await runs.wait(info.id)
        assert done is not None and done.status == "completed"
        assert done.task == "Say hello to the folder." and done.workspace == str(workspace)
        session = store.get_session(done.session_id)
        assert session is not None and session.title == "Say hello to the folder."
        events = list(read_transcript(Path(done.transcript)))
        assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
        assert runs.agents.agents_of([done.id, "r-other"]) == {done.id: "greeter"}
        status = runs.agents.statuses()[0][0]
        assert status.last_run is not None and status.last_run.id == done.id
        assert status.last_trigger == "hand" and status.next_run is None
    store.close()


async def test_the_files_budget_holds_the_run(paths: Paths, workspace: Path) -> None:
    write_agent(
        paths, "thrifty", f"workspace: {workspace}\nmodel: demo\nbudget:\n  max_tokens: 1\n"
    )
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0) as runs:
        done = await runs.wait(runs.agents.start("thrifty").id)
        assert done is not None and done.status == "stopped"
        assert "budget exceeded" in done.reason
    store.close()


async def test_an_agent_does_not_run_twice_at_once_and_can_be_stopped(
    paths: Paths, workspace: Path
) -> None:
    write_agent(paths, "slow", f"workspace: {workspace}\nmodel: demo\n")
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0.5) as runs:
        info = runs.agents.start("slow")
        with pytest.raises(RunRequestError, match="is still running"):
            runs.agents.start("slow")
        stopped = runs.agents.stop("slow")
        assert stopped is not None and stopped.id == info.id
        done = await runs.wait(info.id)
        assert done is not None and done.status == "cancelled"
        assert runs.agents.stop("slow") is None
    store.close()


async def test_an_invalid_or_unknown_agent_does_not_start(paths: Paths, workspace: Path) -> None:
    write_agent(paths, "broken", f"workspace: {workspace}\nautonomy: 3\n")
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus()) as runs:
        with pytest.raises(RunRequestError, match="not valid: the autonomy level"):
            runs.agents.start("broken")
        with pytest.raises(RunRequestError, match="no agent 'ghost'"):
            runs.agents.start("ghost")
        agents, invalid = runs.agents.statuses()
        assert agents == [] and [i.name for i in invalid] == ["broken"]
    store.close()
