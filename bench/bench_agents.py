"""The idle app with 20 scheduled agents against the idle app without them.

Two headless servers (``sparrow-desktop --headless``), one after the other,
each in a fresh SPARROW_HOME with empty Claude Code / Codex folders: one with
no agents, one with 20 valid agent files whose cron times do not fall in the
measurement (each at 04:MM on 1 January). After ``--settle`` seconds (start-up
done: the scheduler's first pass read the files), each is left alone for
``--seconds`` (default 60: the scheduler wakes at least once a minute to look
at the folder, so a minute holds at least one of its wakes) and measured:

- CPU: utime + stime of the server process from ``/proc/PID/stat`` over the
  window, as CPU seconds per minute. Goal: the agents add nothing measurable,
  which ``/proc`` counts in clock ticks (10 ms at USER_HZ 100): at most one
  tick per minute more than without them.
- Memory: ``VmRSS`` at the end of the window. Goal: under 10 MB more.

The process figures carry the idle app's own work (the session monitor's
polls) and its noise of a tick or two; so the scheduler's wake is also timed
in-process (``time.process_time`` over 200 wakes with the same 20 agents):
at one wake a minute, its cost per wake is its CPU per minute.

Also printed: what importing the two libraries agents need (PyYAML, cronsim)
costs a bare interpreter: the app loads them at the first agent file, so only
the server with agents pays it.

Ratio = figure / goal (<= 1.0 meets it). Linux only. Reports; asserts nothing.

    python -m bench.bench_agents [--seconds S] [--settle S] [--agents N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import headless_server, row

ROOT = Path(__file__).resolve().parents[1]
CPU_GOAL_TICKS_PER_MIN = 1.0
MEMORY_GOAL_MB = 10.0
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # After the command's ")": state is field 3, so utime (14) and stime (15) are 11, 12.
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def write_agents(count: int, workspace: Path) -> Callable[[Path], None]:
    def prepare(home: Path) -> None:
        folder = home / "config" / "agents"
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(count):
            (folder / f"agent-{n:02d}.agent.md").write_text(
                f"---\nworkspace: {workspace}\nmodel: demo\nmode: supervised\n"
                f'schedule: "{n} 4 1 1 *"\nmissed: skip\nbudget:\n  max_tokens: 100000\n---\n'
                f"Agent {n}: look at the folder and say what changed since yesterday.\n"
            )

    return prepare


def measure(
    label: str, agents: int, seconds: float, settle: float, workspace: Path
) -> tuple[float, float]:
    env = {
        "CLAUDE_CONFIG_DIR": str(workspace / ".claude"),
        "CODEX_HOME": str(workspace / ".codex"),
        # This checkout's code, not the one the shared venv was installed from.
        "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
    }
    with headless_server(env, prepare=write_agents(agents, workspace)) as served:
        pid = served.process.pid
        time.sleep(settle)
        start_cpu, start = cpu_seconds(pid), time.monotonic()
        time.sleep(seconds)
        used, elapsed = cpu_seconds(pid) - start_cpu, time.monotonic() - start
        rss = rss_mb(pid)
    per_minute = used / elapsed * 60
    print(f"  {label:<28} CPU {per_minute * 1000:7.1f} ms/min   RSS {rss:6.1f} MB", flush=True)
    return per_minute, rss


def wake_cost_ms(count: int, workspace: Path) -> float:
    """CPU milliseconds of one scheduler wake (stat the folder, check each agent
    against the store, compute the next wake) with ``count`` agents, in-process:
    what the minute's wake costs, well below what /proc can resolve."""
    from server.core.paths import Paths
    from server.engine.bus import EventBus
    from server.engine.store import Store
    from server.runtime.runs import RunManager
    from server.runtime.scheduler import Scheduler

    home = workspace / "wake-home"
    write_agents(count, workspace)(home)
    paths = Paths(home / "config", home / "state", home / "data", home / "cache").ensure()
    store = Store(paths.database)
    try:
        scheduler = Scheduler(RunManager(paths=paths, store=store, bus=EventBus()).agents)
        scheduler.tick()  # the first reads and parses the files: start-up, not a wake
        rounds = 200
        start = time.process_time()
        for _ in range(rounds):
            scheduler.tick()
            scheduler._next_wake()
        return (time.process_time() - start) / rounds * 1000
    finally:
        store.close()


def import_cost_mb() -> float:
    code = (
        "import pathlib, sys\n"
        "def rss():\n"
        "    for l in pathlib.Path('/proc/self/status').read_text().splitlines():\n"
        "        if l.startswith('VmRSS:'): return int(l.split()[1]) / 1024\n"
        "before = rss()\nimport yaml, cronsim\nprint(rss() - before)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench.bench_agents")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument("--agents", type=int, default=20)
    args = parser.parse_args([] if argv is None else argv)
    print(f"Agents: the idle app with {args.agents} scheduled agents against without "
          f"({args.seconds:g} s each, after {args.settle:g} s)")
    with tempfile.TemporaryDirectory(prefix="sparrow-bench-agents-") as folder:
        workspace = Path(folder)
        cpu_without, rss_without = measure(
            "without agents", 0, args.seconds, args.settle, workspace
        )
        cpu_with, rss_with = measure(
            f"with {args.agents} agents", args.agents, args.seconds, args.settle, workspace
        )
        wake_ms = wake_cost_ms(args.agents, workspace)
    extra_ticks = max(0.0, (cpu_with - cpu_without) * TICK)
    extra_mb = rss_with - rss_without
    print(row("extra CPU at idle (ticks/min)", f"{extra_ticks:.2f}",
              f"<= {CPU_GOAL_TICKS_PER_MIN:g} tick", extra_ticks / CPU_GOAL_TICKS_PER_MIN))
    print(row("extra resident memory", f"{extra_mb:.1f} MB", f"< {MEMORY_GOAL_MB:g} MB",
              max(0.0, extra_mb) / MEMORY_GOAL_MB))
    print(row(f"one scheduler wake, {args.agents} agents (in-process)", f"{wake_ms:.2f} ms",
              f"<= {1000 / TICK:g} ms/min", wake_ms / (1000 / TICK)))
    print(f"  (of which importing PyYAML and cronsim, loaded only when there are agent "
          f"files: {import_cost_mb():.1f} MB; 1 tick = {1000 / TICK:g} ms)")


if __name__ == "__main__":
    main(sys.argv[1:])
