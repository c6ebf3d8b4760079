"""``make bench``: every benchmark, each printing its figures and its ratio to
the goal (<= 1.0 meets it). ``python -m bench NAME`` runs one."""

from __future__ import annotations

import importlib
import sys

BENCHES = [
    "bench_startup",
    "bench_before",
    "bench_events",
    "bench_monitor",
    "bench_checkpoints",
    "bench_kernel_scale",
    "bench_tokens",
    "bench_context",
    "bench_agents",
    "bench_sessions",
    "bench_follower",
    "bench_tray",
    "bench_mention",
    "bench_package",
]


def main(names: list[str]) -> int:
    for name in names or BENCHES:
        module = importlib.import_module(f"bench.{name.removeprefix('bench.')}")
        module.main()
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
