"""The scheduler: starts each agent with a ``schedule`` at its cron times, inside
the app only (one-shot CLI commands never start one).

It sleeps until the next time any agent is due, waking at least every
``recheck`` seconds to see whether a file changed (a stat of the folder: no
watcher, no CPU to speak of), and at once when the window writes a file.

Each firing is claimed in the store (one row per agent and scheduled time) before
its run starts, so that of two Sparrow processes only one starts it. Times due
before the scheduler started were missed while the app was closed: the agent's
``missed`` says whether the latest of them runs once now or is skipped. A time
passed while the app ran (a suspended laptop) runs once when it wakes."""

from __future__ import annotations

import logging
import time
from typing import Protocol

import anyio

from server.engine.agents import AgentDef
from server.engine.agents.cron import latest_due, next_after
from server.engine.agents.records import BASELINE, SKIPPED, STARTED
from server.runtime.agents import SCHEDULE, AgentRuntime
from server.runtime.runs import RunRequestError

RECHECK_SECONDS = 60.0
KEEP_FIRINGS_SECONDS = 7 * 86400  # older firings are forgotten (the runs stay)
CLAIMED = "claimed"
SURFACE = "scheduler"

log = logging.getLogger(__name__)


class Clock(Protocol):
    """Wall-clock time, in seconds since the epoch; tests drive their own."""

    def now(self) -> float: ...

    async def sleep_until(self, when: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    async def sleep_until(self, when: float) -> None:
        await anyio.sleep(max(0.0, when - time.time()))


class Scheduler:
    def __init__(
        self, agents: AgentRuntime, clock: Clock | None = None, recheck: float = RECHECK_SECONDS
    ) -> None:
        self.agents = agents
        self.clock: Clock = clock or SystemClock()
        self.recheck = recheck
        self.started_at: float | None = None
        self._signature: object = None
        self._scheduled: list[AgentDef] = []
        self._poke = anyio.Event()
        agents.on_change.append(self.poke)

    def poke(self) -> None:
        """Look at the files again now (one was written through the app)."""
        self._poke.set()

    async def run(self) -> None:
        self.started_at = self.clock.now()
        while True:
            # A failed pass (the store busy past its timeout, a file vanishing
            # mid-read) must not end the app's task group: it tries again later.
            try:
                self.tick()
                wake = self._next_wake()
            except Exception:
                log.exception("the scheduler's pass failed; it tries again in %g s", self.recheck)
                wake = self.clock.now() + self.recheck
            await self._nap(wake)

    def tick(self) -> list[str]:
        """Start what is due now; the runs started."""
        if self.started_at is None:
            self.started_at = self.clock.now()
        self._reload()
        now = self.clock.now()
        started = []
        for agent in self._scheduled:
            run_id = self._settle(agent, now)
            if run_id is not None:
                started.append(run_id)
        return started

    def _reload(self) -> None:
        signature = self.agents.folder.signature()
        if signature != self._signature:
            self._signature = signature
            self._scheduled = [a for a in self.agents.listing().agents if a.schedule]

    def _settle(self, agent: AgentDef, now: float) -> str | None:
        assert agent.schedule is not None and self.started_at is not None
        records = self.agents.records
        last = records.last_fire(agent.name)
        if last is None:
            # First seen: its times count from now; none were missed before it existed.
            records.claim(agent.name, now, BASELINE)
            return None
        due = latest_due(agent.schedule, now)
        if due <= last:
            return None
        if due <= self.started_at and agent.missed == "skip":
            records.claim(agent.name, due, SKIPPED)
            return None
        if not records.claim(agent.name, due, CLAIMED):
            return None  # another Sparrow process has this firing
        try:
            info = self.agents.start(
                agent.name, surface=SURFACE, trigger=SCHEDULE, fire_time=due
            )
        except RunRequestError as exc:
            log.warning("the agent %s did not start at its scheduled time: %s", agent.name, exc)
            records.settle(agent.name, due, f"not started: {exc}", None)
            return None
        records.settle(agent.name, due, STARTED, info.id)
        records.prune(agent.name, due - KEEP_FIRINGS_SECONDS)
        return info.id

    def _next_wake(self) -> float:
        now = self.clock.now()
        wake = now + self.recheck
        for agent in self._scheduled:
            assert agent.schedule is not None
            wake = min(wake, next_after(agent.schedule, now))
        return wake

    async def _nap(self, until: float) -> None:
        """Sleep until ``until`` or a poke, whichever comes first."""
        poked = self._poke
        async with anyio.create_task_group() as tg:

            async def sleep() -> None:
                await self.clock.sleep_until(until)
                tg.cancel_scope.cancel()

            async def wait_poke() -> None:
                await poked.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(sleep)
            tg.start_soon(wait_poke)
        if poked.is_set():
            self._poke = anyio.Event()
            self._signature = None  # reread even when the mtime did not move
