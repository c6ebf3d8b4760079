"""``sparrow run``: one agent run in this process, printed as it happens."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio

from server.cli.context import apply_retention, fail, open_state
from server.cli.render import HumanRenderer, JsonRenderer
from server.cli.tty_approver import NotInteractive, TtyApprover, choose_approver
from server.core.events import RunFinished
from server.engine.bus import EventBus, Subscription
from server.engine.store import RunInfo
from server.providers.scripted import (
    ScriptedProvider,
    ScriptError,
    parse_script,
    read_script,
    script_accepts_images,
)
from server.runtime.follower import CANCEL_REASON
from server.runtime.runs import RunManager, RunRequest, RunRequestError

EXIT_CODES = {"completed": 0, "failed": 1, "stopped": 1, "cancelled": 130}
Renderer = JsonRenderer | HumanRenderer
# SIGUSR1: the app's Cancel on a run of this terminal (it follows it live).
CANCEL_SIGNALS = [signal.SIGINT, signal.SIGTERM] + (
    [signal.SIGUSR1] if hasattr(signal, "SIGUSR1") else []
)
CANCEL_REASONS = {
    signal.SIGINT: "cancelled by Ctrl-C",
    signal.SIGTERM: "cancelled by SIGTERM",
    **({signal.SIGUSR1: CANCEL_REASON} if hasattr(signal, "SIGUSR1") else {}),
}


def handle(args: argparse.Namespace) -> int:
    if not args.workspace and not args.continue_from:
        return fail("say where to work: --workspace DIR (or --continue RUN_ID)", 2)
    request = RunRequest(
        args.workspace or "",
        args.task,
        model="demo" if args.demo else args.model,
        continue_from=args.continue_from,
        handoff=args.handoff,
        # Relative to where the command runs, as a shell user means them.
        attachments=[str(Path(p).expanduser().absolute()) for p in args.attach],
    )
    if args.script:
        try:
            raw = read_script(Path(args.script))
            turns = parse_script(raw, args.script)
        except ScriptError as exc:
            return fail(str(exc), 2)
        request.provider = ScriptedProvider(
            turns, name="script", accepts_images=script_accepts_images(raw)
        )
    # The run's own mode / level when given (else it follows the shared dial, live).
    request.mode = args.mode
    request.autonomy = args.autonomy
    request.sandbox = args.sandbox
    return run_in_terminal(request, json_out=args.json, yes=args.yes)


def run_in_terminal(request: RunRequest, *, json_out: bool, yes: bool) -> int:
    """Run ``request`` here, printing its events; the exit code of its ending."""
    request.surface = "cli"
    # Always an approver of our own: the default one waits for another surface,
    # and a terminal run has none.
    approver = choose_approver(yes=yes)
    request.approver = approver
    renderer: Renderer = (
        JsonRenderer()
        if json_out
        else HumanRenderer(show_questions=not isinstance(approver, TtyApprover))
    )
    code = anyio.run(follow_run, lambda runs: runs.start(request), renderer)
    hint = approver.hint() if isinstance(approver, NotInteractive) else None
    if hint is not None:
        print(hint, file=sys.stderr)
    return code


async def follow_run(start: Callable[[RunManager], RunInfo], renderer: Renderer) -> int:
    """Start a run (``start``) in this process and print it as it happens."""
    # The age limit once the run exists: a session continued here is never deleted.
    paths, store = open_state(retention=False)
    bus = EventBus()
    try:
        # The terminal is this run's only reader: a generous queue, never a lagged drop.
        with bus.subscribe(limit=1_000_000) as subscription:
            async with RunManager(paths=paths, store=store, bus=bus) as runs:
                # Listening before the run exists: a cancel sent at once is not lost.
                with anyio.open_signal_receiver(*CANCEL_SIGNALS) as signals:
                    try:
                        info = start(runs)
                    except RunRequestError as exc:
                        return fail(str(exc), 2)
                    apply_retention(paths, store)
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(_cancel_on_signal, runs, info.id, signals)
                        status = await _follow(subscription, renderer)
                        tg.cancel_scope.cancel()
    finally:
        store.close()
    if isinstance(renderer, HumanRenderer):
        print(f"replay it: sparrow replay {info.id}", file=sys.stderr)
    return EXIT_CODES.get(status, 1)


async def _follow(subscription: Subscription, renderer: Renderer) -> str:
    while True:
        for event in await subscription.receive():
            renderer(event)
            if isinstance(event, RunFinished):
                return event.status


async def _cancel_on_signal(
    runs: RunManager, run_id: str, signals: AsyncIterator[signal.Signals]
) -> None:
    async for signum in signals:
        runs.cancel(run_id, CANCEL_REASONS.get(signum, f"cancelled by {signum.name}"))
        return
