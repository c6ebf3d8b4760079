"""``sparrow runs``: recent runs, newest first, each with the agent that
started it (none: a person did)."""

from __future__ import annotations

import argparse
import json

from server.cli.context import open_state
from server.core import formatting
from server.engine.agents.records import AgentRecords

AGENT_WIDTH = 12


def agent_cell(name: str | None) -> str:
    """The AGENT column of ``runs`` and ``sessions``: "-" when a person started it."""
    if not name:
        return "-"
    return name if len(name) <= AGENT_WIDTH else name[: AGENT_WIDTH - 1] + "…"


def handle(args: argparse.Namespace) -> int:
    _, store = open_state()
    try:
        runs = store.recent_runs(max(1, args.limit))
        agents = AgentRecords(store).agents_of(info.id for info in runs)  # one query
    finally:
        store.close()
    if args.json:
        for info in runs:
            print(json.dumps(info.to_dict() | {"agent": agents.get(info.id)}, ensure_ascii=False))
        return 0
    if not runs:
        print('no runs yet: try `sparrow run --demo --workspace DIR "say hello"`')
        return 0
    print(f"{'RUN':<26} {'STATUS':<11} {'AGENT':<12} {'MODEL':<8} {'TURNS':>5}  {'WHEN':<10}  "
          "TASK / WORKSPACE")
    for info in runs:
        task = info.task if len(info.task) <= 40 else info.task[:39] + "…"
        print(
            f"{info.id:<26} {info.status:<11} {agent_cell(agents.get(info.id)):<12} "
            f"{info.model:<8} {info.turns:>5}  "
            f"{formatting.age(info.created_at):<10}  {task}  ({info.workspace})"
        )
    return 0
