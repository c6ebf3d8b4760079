from pathlib import Path

import anyio
import pytest

from server.core.events import Event, RunFinished, TextDelta
from server.core.paths import Paths
from server.engine.bus import EventBus
from server.engine.store import Store
from server.providers.scripted import ScriptedProvider, ScriptedToolCall, ScriptedTurn
from server.runtime.runs import SHUTDOWN_REASON, RunManager, RunRequest, RunRequestError

pytestmark = pytest.mark.anyio


def slow_provider() -> ScriptedProvider:
    return ScriptedProvider(
        [ScriptedTurn("one two three four five six seven eight nine ten")], chunk_delay=5
    )


async def test_several_runs_at_once_each_on_its_own_workspace(paths: Paths, tmp_path: Path) -> None:
    store = Store(paths.database)
    folders = [tmp_path / f"ws{i}" for i in range(3)]
    for folder in folders:
        folder.mkdir()
    async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0.001) as runs:
        infos = [runs.start(RunRequest(str(f), f"task {i}")) for i, f in enumerate(folders)]
        assert all(runs.is_live(info.id) for info in infos)
        finished = [await runs.wait(info.id) for info in infos]
    assert [f.status for f in finished if f] == ["completed"] * 3
    for folder in folders:
        assert (folder / "SPARROW_DEMO.md").exists()
    for info in infos:
        events = runs.events(info.id)
        assert events and events[-1].type == "run_finished"
        assert Path(info.transcript).is_file()


async def test_cancel_ends_one_run_and_leaves_the_others(paths: Paths, workspace: Path) -> None:
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus()) as runs:
        doomed = runs.start(RunRequest(str(workspace), "slow", provider=slow_provider()))
        kept = runs.start(
            RunRequest(str(workspace), "quick", provider=ScriptedProvider([ScriptedTurn("ok")]))
        )
        await anyio.wait_all_tasks_blocked()
        assert runs.cancel(doomed.id, "changed my mind")
        assert not runs.cancel("r-unknown")
        cancelled, completed = await runs.wait(doomed.id), await runs.wait(kept.id)
    assert cancelled is not None and (cancelled.status, cancelled.reason) == (
        "cancelled",
        "changed my mind",
    )
    assert completed is not None and completed.status == "completed"


async def test_leaving_the_manager_cancels_live_runs_cleanly(paths: Paths, workspace: Path) -> None:
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus()) as runs:
        info = runs.start(RunRequest(str(workspace), "slow", provider=slow_provider()))
        await anyio.wait_all_tasks_blocked()
    row = store.get_run(info.id)
    assert row is not None and (row.status, row.reason) == ("cancelled", SHUTDOWN_REASON)
    events = runs.events(info.id)
    assert events is not None and isinstance(events[-1], RunFinished)
    assert events[-1].status == "cancelled"


async def test_follow_gives_history_then_live_events_without_gap(
    paths: Paths, workspace: Path
) -> None:
    store = Store(paths.database)
    provider = ScriptedProvider(
        [
            ScriptedTurn("a b c", (ScriptedToolCall("list_dir", {"path": "."}),)),
            ScriptedTurn("d e f"),
        ],
        chunk_delay=0.01,
    )
    async with RunManager(paths=paths, store=store, bus=EventBus()) as runs:
        info = runs.start(RunRequest(str(workspace), "t", provider=provider))
        await anyio.sleep(0.03)
        history, subscription = runs.follow(info.id)
        assert history, "some events happened before following"
        received: list[Event] = list(history)
        with subscription:
            while not isinstance(received[-1], RunFinished):
                received.extend(await subscription.receive())
    seqs = [e.seq for e in received]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
    text = "".join(e.text for e in received if isinstance(e, TextDelta))
    assert text == "a b cd e f"


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (RunRequest("/definitely/not/here", "t"), "workspace not found"),
        (RunRequest("{ws}", "   "), "the task is empty"),
        (RunRequest("{ws}", "t", model="gpt-99"), "'gpt-99' is not a model id.*openai:gpt-99"),
        (RunRequest("{ws}", "t", model="nope:m"), "unknown provider 'nope'.*anthropic"),
        (
            RunRequest("{ws}", "t", model="anthropic:claude-sonnet-4-6"),
            "no API key for Anthropic: set one with `sparrow keys set anthropic`",
        ),
        (RunRequest("{ws}", "t", model="script", script={"turns": "no"}), "turns"),
        (RunRequest("{ws}", "t", model="script"), "needs a script"),
    ],
)
async def test_bad_requests_are_refused_with_a_reason(
    paths: Paths, workspace: Path, request_: RunRequest, message: str
) -> None:
    request_.workspace = request_.workspace.replace("{ws}", str(workspace))
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus()) as runs:
        with pytest.raises(RunRequestError, match=message):
            runs.start(request_)
        assert runs.recent() == []


async def test_a_broken_workspace_config_refuses_the_run(paths: Paths, workspace: Path) -> None:
    (workspace / ".sparrow").mkdir()
    (workspace / ".sparrow" / "config.toml").write_text("[shell]\ntimeout = 1\n")
    async with RunManager(paths=paths, store=Store(paths.database), bus=EventBus()) as runs:
        with pytest.raises(
            RunRequestError, match=r"config.toml: \[shell\] timeout: unknown setting"
        ):
            runs.start(RunRequest(str(workspace), "t"))
