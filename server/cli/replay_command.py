"""``sparrow replay RUN_ID``: the run's events again, read from its transcript."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from server.cli.context import fail, open_state
from server.cli.render import HumanRenderer, JsonRenderer
from server.engine.transcript import BadLine, read_transcript


def handle(args: argparse.Namespace) -> int:
    path = Path(args.run_id)
    if not (path.suffix == ".jsonl" and path.is_file()):
        _, store = open_state()
        try:
            info = store.get_run(args.run_id)
        finally:
            store.close()
        if info is None:
            return fail(f"no run {args.run_id!r}; `sparrow runs` lists the recent ones")
        path = Path(info.transcript)
    if not path.is_file():
        return fail(f"the transcript of {args.run_id} is missing: {path}")
    renderer = JsonRenderer() if args.json else HumanRenderer()
    skipped = 0
    for item in read_transcript(path):
        if isinstance(item, BadLine):
            skipped += 1
            print(
                f"sparrow: {path.name} line {item.number} skipped: {item.problem}", file=sys.stderr
            )
            continue
        renderer(item)
    return 1 if skipped else 0
