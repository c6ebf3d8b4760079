"""A clock the scheduler's tests drive: time moves only when the scheduler
sleeps, jumping to the time it sleeps until, once the runs going have finished;
past ``end`` it stops and says so."""

from __future__ import annotations

import anyio

from server.runtime.runs import RunManager


class VirtualClock:
    def __init__(self, start: float, end: float, runs: RunManager, step: float = 0.0) -> None:
        self.time = start
        self.end = end
        self.runs = runs
        self.step = step  # real seconds per wake: lets two processes interleave
        self.wakes: list[float] = []
        self.done = anyio.Event()

    def now(self) -> float:
        return self.time

    async def sleep_until(self, when: float) -> None:
        # Runs take no virtual time: those going (in this process or another on
        # the same store) end before time moves on. Polled: another process's run
        # has no event to wait on here.
        while any(info.status == "running" for info in self.runs.recent(100)):  # noqa: ASYNC110
            await anyio.sleep(0.01)
        if when > self.end:
            self.done.set()
            await anyio.sleep_forever()
        await anyio.sleep(self.step)
        self.time = max(self.time, when)
        self.wakes.append(self.time)
