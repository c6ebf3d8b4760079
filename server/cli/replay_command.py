"""``sparrow replay RUN_ID``: a conversation again, read from its transcripts:
every run of it up to RUN_ID (``--run-only``: that run alone), or what one of
its turns sent to the model (``--request TURN``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from server.cli.context import fail, open_state
from server.cli.render import HumanRenderer, JsonRenderer
from server.engine.conversation import request_of
from server.engine.transcript import BadLine, read_transcript


def _transcripts(run_id: str, run_only: bool) -> list[Path] | str:
    """The transcripts to replay, oldest first; a message when there are none."""
    path = Path(run_id)
    if path.suffix == ".jsonl" and path.is_file():
        return [path]
    # Not past the age limit first: the run asked for may be an old one.
    _, store = open_state(retention=False)
    try:
        info = store.get_run(run_id)
        runs = store.session_runs(info.session_id) if info is not None else []
    finally:
        store.close()
    if info is None:
        return f"no run {run_id!r}; `sparrow runs` lists the recent ones"
    if run_only:
        return [Path(info.transcript)]
    ids = [r.id for r in runs]
    return [Path(r.transcript) for r in runs[: ids.index(run_id) + 1]]


def handle(args: argparse.Namespace) -> int:
    found = _transcripts(args.run_id, args.run_only or args.request is not None)
    if isinstance(found, str):
        return fail(found)
    missing = [p for p in found if not p.is_file()]
    if missing:
        return fail(f"the transcript of {args.run_id} is missing: {missing[0]}")
    if args.request is not None:
        return _request(args, found[0])
    if args.speed < 0:
        return fail(f"--speed must be 0 (at once) or more, not {args.speed:g}", 2)
    renderer = JsonRenderer() if args.json else HumanRenderer()
    pace = Pace(args.speed)
    skipped = 0
    for path in found:
        for item in read_transcript(path):
            if isinstance(item, BadLine):
                skipped += 1
                print(
                    f"sparrow: {path.name} line {item.number} skipped: {item.problem}",
                    file=sys.stderr,
                )
                continue
            pace.wait(item.ts)
            renderer(item)
    return 1 if skipped else 0


class Pace:
    """The recorded timing, ``speed`` times as fast (0: no waiting). A pause
    longer than MAX_PAUSE (someone away, a day between follow-ups) is cut to it."""

    MAX_PAUSE = 5.0

    def __init__(self, speed: float) -> None:
        self.speed = speed
        self._last: float | None = None

    def wait(self, ts: float) -> None:
        if self.speed > 0 and self._last is not None and ts > self._last:
            sys.stdout.flush()
            time.sleep(min((ts - self._last) / self.speed, self.MAX_PAUSE))
        self._last = ts


def _request(args: argparse.Namespace, transcript: Path) -> int:
    found = _transcripts(args.run_id, run_only=False)
    earlier = found[:-1] if isinstance(found, list) else []
    sent = request_of(earlier, transcript, args.request)
    if sent is None:
        return fail(f"run {args.run_id} sent no request in turn {args.request}")
    if args.json:
        print(json.dumps(sent, ensure_ascii=False))
        return 0
    print(f"model {sent['model']} · turn {sent['turn']} · {len(sent['messages'])} messages")
    print(f"\n--- system ({len(sent['system']):,} characters)\n{sent['system']}")
    print(f"\n--- tools: {', '.join(t['name'] for t in sent['tools'])}")
    for number, message in enumerate(sent["messages"]):
        print(f"\n--- {number} {message['role']}")
        body = {k: v for k, v in message.items() if k != "role"}
        print(json.dumps(body, ensure_ascii=False, indent=2))
    return 0
