import anyio
import pytest

from server.core.events import Event, RunFinished, TextDelta
from server.engine.bus import EventBus, SubscriberLagged

pytestmark = pytest.mark.anyio


def delta(seq: int, text: str, run: str = "r", turn: int = 1) -> TextDelta:
    return TextDelta(run_id=run, seq=seq, turn=turn, text=text)


async def test_sinks_see_every_event_and_subscribers_their_runs() -> None:
    bus = EventBus()
    seen: list[Event] = []
    bus.add_sink(seen.append)
    only_a = bus.subscribe({"a"})
    everything = bus.subscribe()
    bus.publish(RunFinished(run_id="a", seq=1, status="completed", reason=""))
    bus.publish(RunFinished(run_id="b", seq=1, status="completed", reason=""))
    assert len(seen) == 2
    assert [e.run_id for e in await only_a.receive()] == ["a"]
    assert [e.run_id for e in await everything.receive()] == ["a", "b"]


async def test_an_empty_subscription_receives_nothing_until_it_names_a_run() -> None:
    bus = EventBus()
    sub = bus.subscribe(set())
    bus.publish(delta(1, "not mine", run="b"))
    sub.run_ids.add("a")
    bus.publish(delta(1, "mine", run="a"))
    assert [e.text for e in await sub.receive()] == ["mine"]  # type: ignore[attr-defined]


async def test_a_slow_subscriber_gets_deltas_merged_and_never_blocks_publishing() -> None:
    bus = EventBus()
    slow = bus.subscribe(limit=5)
    for i in range(1, 10_001):
        bus.publish(delta(i, "x"))  # synchronous: returns without waiting for anyone
    batch = await slow.receive()
    assert len(batch) == 1 and batch[0].text == "x" * 10_000 and batch[0].seq == 10_000


async def test_deltas_of_other_turns_or_runs_are_not_merged() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    bus.publish(delta(1, "a"))
    bus.publish(delta(2, "b", turn=2))
    bus.publish(delta(1, "c", run="other"))
    assert [e.text for e in await sub.receive()] == ["a", "b", "c"]  # type: ignore[attr-defined]


async def test_a_subscriber_that_falls_behind_is_dropped_not_waited_for() -> None:
    bus = EventBus()
    sub = bus.subscribe(limit=3)
    for i in range(5):
        bus.publish(RunFinished(run_id="r", seq=i, status="completed", reason=""))
    assert sub.lagged and sub.closed
    with pytest.raises(SubscriberLagged):
        await sub.receive()


async def test_receive_waits_for_the_next_event() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    got: list[list[Event]] = []

    async def reader() -> None:
        got.append(await sub.receive())

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        await anyio.wait_all_tasks_blocked()
        assert not got
        bus.publish(delta(1, "hi"))
    assert got[0][0].text == "hi"  # type: ignore[attr-defined]


async def test_closed_subscriptions_stop_receiving() -> None:
    bus = EventBus()
    with bus.subscribe() as sub:
        pass
    bus.publish(delta(1, "x"))
    with pytest.raises(anyio.EndOfStream):
        await sub.receive()
