"""What following runs of other processes costs the app (server/runtime/follower.py).

(a) Idle: the app's follower looks at the database every 0.5 s. One look with
    nothing new (``PRAGMA data_version`` unchanged), and one after another
    process committed (the look for new runs, on the ``created_at`` index), over
    a history of 10,000 runs. Figure: CPU time per look, and as a share of one
    core at the idle rate. Goal: under 0.1 % of a core (no measurable idle CPU).
(b) Following: a transcript of another process growing by 20,000 events, looked
    at after every 10: bytes read from disk per byte written (goal: at most 1.05:
    nothing is read twice but a partial line met by a look, read again once
    complete; here one event in ten is half-written at a look), and CPU
    time per event published.

Ratio = figure / goal (<= 1.0 meets it). Reports; asserts nothing.

    python -m bench.bench_follower [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.common import row

HISTORY = 10_000
EVENTS = 20_000
IDLE_GOAL_SHARE = 0.001  # of one core
# What is written, plus each partial line met read again once it is complete.
READ_GOAL = 1.05


def _history(db: Path) -> None:
    """10,000 finished runs of other processes, as a long-used install has."""
    now = time.time()
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO sessions VALUES ('s-old', '/w', 'old', ?)", (now - 1e6,))
        conn.executemany(
            "INSERT INTO runs (id, session_id, workspace, task, model, status, reason, turns, "
            "pid, transcript, created_at, finished_at) VALUES (?, 's-old', '/w', 't', 'demo', "
            "'completed', '', 1, 1, '/nowhere', ?, ?)",
            [(f"r-old-{i}", now - 1e6 + i, now - 1e6 + i) for i in range(HISTORY)],
        )


def _cpu(function: object, times: int) -> float:
    """CPU seconds per call of ``function``."""
    assert callable(function)
    start = time.process_time()
    for _ in range(times):
        function()
    return (time.process_time() - start) / times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_follower")
    parser.add_argument("--runs", type=int, default=2000, help="looks to time (default 2000)")
    args = parser.parse_args(argv if argv is not None else [])

    home = Path(tempfile.mkdtemp(prefix="sparrow-bench-follower-"))
    os.environ["SPARROW_HOME"] = str(home)
    from server.core.paths import resolve_paths
    from server.engine.bus import EventBus
    from server.engine.store import Store
    from server.runtime.follower import IDLE_POLL, RunFollower
    from server.runtime.runs import RunManager

    paths = resolve_paths().ensure()
    Store(paths.database).close()
    _history(paths.database)
    store = Store(paths.database)
    runs = RunManager(paths=paths, store=store, bus=EventBus())
    follower = RunFollower(runs)
    subscription = runs.bus.subscribe(limit=10 * EVENTS)
    follower.poll()

    print(f"Following runs elsewhere ({HISTORY:,} runs of history)")
    idle = _cpu(follower.poll, args.runs)
    share = idle / IDLE_POLL
    print(row("idle look (nothing new)", f"{idle * 1e6:.1f} µs", "", None))
    print(
        row(
            "idle CPU at one look / 0.5 s",
            f"{share * 100:.4f} %",
            "< 0.1 %",
            share / IDLE_GOAL_SHARE,
        )
    )

    other = sqlite3.connect(paths.database)

    def changed() -> None:
        other.execute("INSERT OR REPLACE INTO preferences VALUES ('bench', '1', 0)")
        other.commit()

    commit = _cpu(changed, 200)
    looked = [_cpu(lambda: (changed(), follower.poll()), 1) - commit for _ in range(200)]
    print(
        row(
            "look after another process's commit",
            f"{statistics.median(looked) * 1e6:.0f} µs",
            "",
            None,
        )
    )

    # (b) a run of "another process": its row, and a transcript written line by line.
    now = time.time()
    transcript = paths.transcript("r-far")
    other.execute("INSERT INTO sessions VALUES ('s-far', '/w', 'far', ?)", (now,))
    other.execute(
        "INSERT INTO runs (id, session_id, workspace, task, model, status, reason, turns, pid, "
        "transcript, created_at) VALUES ('r-far', 's-far', '/w', 't', 'demo', 'running', '', 0, "
        "1, ?, ?)",
        (str(transcript), now),
    )
    other.commit()
    written = 0
    with transcript.open("ab", buffering=0) as out:
        start = json.dumps(
            {
                "type": "run_started",
                "run_id": "r-far",
                "seq": 1,
                "ts": now,
                "task": "t",
                "workspace": "/w",
                "model": "demo",
                "session_id": "s",
            }
        )
        written += out.write(start.encode() + b"\n")
        follower.poll()
        cpu = 0.0
        for seq in range(2, EVENTS + 2):
            line = (
                json.dumps(
                    {
                        "type": "text_delta",
                        "run_id": "r-far",
                        "seq": seq,
                        "ts": now,
                        "turn": 1,
                        "text": f"word {seq} ",
                    }
                ).encode()
                + b"\n"
            )
            # Half a line now, the rest later: the follower meets partial lines too.
            written += out.write(line[:20])
            if seq % 10 == 0:
                t0 = time.process_time()
                follower.poll()
                cpu += time.process_time() - t0
            written += out.write(line[20:])
    follower.poll()
    tail = follower._followed["r-far"].tail
    ratio = tail.bytes_read / written
    print(row("bytes read / bytes written", f"{ratio:.3f}", "<= 1.05", ratio / READ_GOAL))
    print(row("CPU per event followed", f"{cpu / EVENTS * 1e6:.1f} µs", "", None))
    subscription.close()
    other.close()
    store.close()


if __name__ == "__main__":
    main(sys.argv[1:])
