"""The scheduler under a clock the test drives: starts at the cron times, one
process only per firing, and missed times by the agent's policy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from server.core.paths import Paths
from server.engine.agents.cron import latest_due
from server.engine.agents.records import BASELINE, SKIPPED, STARTED, AgentRecords
from server.engine.bus import EventBus
from server.engine.store import Store
from server.runtime.runs import RunManager
from server.runtime.scheduler import Scheduler
from tests.conftest import ROOT
from tests.runtime.virtual_clock import VirtualClock

pytestmark = pytest.mark.anyio

EVERY_5 = "*/5 * * * *"
# A five-minute mark in this machine's time zone (cron reads local time).
T0 = latest_due(EVERY_5, 1_800_000_000.0)


def write_agent(paths: Paths, workspace: Path, name: str, extra: str = "") -> None:
    paths.agents.mkdir(parents=True, exist_ok=True)
    (paths.agents / f"{name}.agent.md").write_text(
        f'---\nworkspace: {workspace}\nmodel: demo\nschedule: "{EVERY_5}"\n{extra}---\n'
        "Say what is in the folder.\n"
    )


async def walk(runs: RunManager, start: float, end: float) -> VirtualClock:
    clock = VirtualClock(start, end, runs)
    async with anyio.create_task_group() as tg:
        tg.start_soon(Scheduler(runs.agents, clock).run)
        await clock.done.wait()
        tg.cancel_scope.cancel()
    return clock


def started(records: AgentRecords, name: str) -> list[float]:
    return [t for t, outcome, _ in records.firings(name) if outcome == STARTED]


async def test_every_five_minutes_over_twenty_minutes_starts_four_runs(
    paths: Paths, workspace: Path
) -> None:
    write_agent(paths, workspace, "tidy")
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0) as runs:
        clock = await walk(runs, T0, T0 + 20 * 60)
        records = runs.agents.records
        assert started(records, "tidy") == [T0 + 300, T0 + 600, T0 + 900, T0 + 1200]
        rows = records.runs_of("tidy")
        assert sorted(r.fire_time or 0 for r in rows) == started(records, "tidy")
        assert {r.trigger for r in rows} == {"schedule"}
        statuses = {store.get_run(r.run_id).status for r in rows}  # type: ignore[union-attr]
        assert statuses == {"completed"}
        # It slept until each due time (and the minute's recheck), never in between.
        assert set(clock.wakes) >= {T0 + 300, T0 + 600, T0 + 900, T0 + 1200}
        assert all((t - T0) % 60 == 0 for t in clock.wakes)
    store.close()


async def test_a_file_changed_while_it_sleeps_is_read_at_its_next_wake(
    paths: Paths, workspace: Path
) -> None:
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0) as runs:
        clock = VirtualClock(T0, T0 + 10 * 60, runs)
        scheduler = Scheduler(runs.agents, clock)
        scheduler.tick()  # no agents yet
        write_agent(paths, workspace, "late")
        scheduler.tick()  # seen now: its times count from here
        clock.time = T0 + 300
        assert len(scheduler.tick()) == 1
    store.close()


@pytest.mark.parametrize(("policy", "expected"), [("run-once", 2), ("skip", 1)])
async def test_a_time_missed_while_closed_follows_the_agents_policy(
    paths: Paths, workspace: Path, policy: str, expected: int
) -> None:
    write_agent(paths, workspace, "nightly", f"missed: {policy}\n")
    store = Store(paths.database)
    records = AgentRecords(store)
    records.claim("nightly", T0, BASELINE)  # the app last saw it at T0, then closed
    opened = T0 + 3600 + 60  # twelve times were missed; the latest at T0 + 3600
    async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0) as runs:
        await walk(runs, opened, T0 + 3600 + 5 * 60)
    firings = {t: outcome for t, outcome, _ in records.firings("nightly")}
    runs_started = sorted(r.fire_time or 0 for r in records.runs_of("nightly"))
    if policy == "run-once":
        assert runs_started == [T0 + 3600, T0 + 3900]  # once at start, then on time
        assert firings[T0] == BASELINE
    else:
        assert firings[T0 + 3600] == SKIPPED
        assert runs_started == [T0 + 3900]
    assert len(runs_started) == expected
    store.close()


def test_a_second_process_does_not_start_the_same_firing(paths: Paths, workspace: Path) -> None:
    write_agent(paths, workspace, "shared")
    end = T0 + 20 * 60
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    other = subprocess.Popen(
        [sys.executable, "-m", "tests.runtime.scheduler_process", str(T0), str(end)],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert other.stdin is not None and other.stdout is not None
    store = Store(paths.database)
    try:
        assert other.stdout.readline().strip() == "ready"

        async def this_process() -> None:
            async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0) as runs:
                assert other.stdin is not None
                other.stdin.write("go\n")  # both walk the same twenty minutes from here
                other.stdin.flush()
                clock = VirtualClock(T0, end, runs, step=0.02)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(Scheduler(runs.agents, clock).run)
                    await clock.done.wait()
                    tg.cancel_scope.cancel()

        anyio.run(this_process)
        out, _ = other.communicate(timeout=120)
        assert other.returncode == 0 and out.strip() == "done"
    finally:
        if other.poll() is None:
            other.kill()
    records = AgentRecords(store)
    rows = store.db.execute_sql(
        "SELECT fire_time, pid FROM agent_firings WHERE agent = 'shared' AND outcome = ?",
        (STARTED,),
    ).fetchall()
    assert sorted(t for t, _ in rows) == [T0 + 300, T0 + 600, T0 + 900, T0 + 1200]
    assert {pid for _, pid in rows} <= {os.getpid(), other.pid}
    assert len(records.runs_of("shared")) == 4  # one run per firing, whoever started it
    store.close()


async def test_firings_older_than_a_week_are_forgotten(paths: Paths, workspace: Path) -> None:
    write_agent(paths, workspace, "tidy")
    store = Store(paths.database)
    records = AgentRecords(store)
    records.claim("tidy", T0 - 8 * 86400, BASELINE)
    records.claim("tidy", T0 - 3 * 86400, STARTED)
    async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0) as runs:
        await walk(runs, T0 - 60, T0 + 60)  # T0 - 300 missed (run once at start), then T0
    assert [t for t, _, _ in records.firings("tidy")] == [T0 - 3 * 86400, T0 - 300, T0]
    store.close()


def test_the_claim_is_the_stores_across_connections(paths: Paths) -> None:
    first, second = Store(paths.database), Store(paths.database)
    assert AgentRecords(first).claim("a", T0, "claimed") is True
    assert AgentRecords(second).claim("a", T0, "claimed") is False
    assert AgentRecords(second).claim("a", T0 + 300, "claimed") is True
    first.close()
    second.close()


async def test_a_failed_pass_is_logged_and_the_scheduler_goes_on(
    paths: Paths, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_agent(paths, workspace, "tidy")
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0) as runs:
        assert runs.agents.records.last_fire("tidy") is None  # the tables are made...
        store.db.execute_sql("DROP TABLE agent_firings")  # ...and one goes from under it
        clock = await walk(runs, T0, T0 + 5 * 60)
    assert clock.wakes == [T0 + 60 * n for n in range(1, 6)]  # a pass a minute, none fatal
    assert "the scheduler's pass failed; it tries again in 60 s" in caplog.text
    store.close()
