"""A second Sparrow process with a scheduler on the same store, for the test that
two processes do not both start a firing: ``python -m tests.runtime.scheduler_process
START END``. Prints "ready", waits for a line on stdin, walks the virtual time from
START to END, and prints "done"; the store says what it started."""

from __future__ import annotations

import sys

import anyio

from server.core.paths import resolve_paths
from server.engine.bus import EventBus
from server.engine.store import Store
from server.runtime.runs import RunManager
from server.runtime.scheduler import Scheduler
from tests.runtime.virtual_clock import VirtualClock


async def main(start: float, end: float) -> None:
    paths = resolve_paths().ensure()
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus(), demo_delay=0) as runs:
        clock = VirtualClock(start, end, runs, step=0.02)
        scheduler = Scheduler(runs.agents, clock)
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)
        async with anyio.create_task_group() as tg:
            tg.start_soon(scheduler.run)
            await clock.done.wait()
            tg.cancel_scope.cancel()
    store.close()
    print("done", flush=True)


if __name__ == "__main__":
    anyio.run(main, float(sys.argv[1]), float(sys.argv[2]))
