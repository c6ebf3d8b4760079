"""Quit at a safe point: the live runs are cancelled and the app waits for each
to end — its checkpoints taken (a checkpoint is made before a tool changes
anything, and a cancel does not cut one short), its transcript closed with
``run_finished``, its row in the store finished — before the server stops.

A cancel stops a streaming turn at once; a tool mid-execution is stopped (its
process killed) and the run ends. What the app waits for is said in the tray's
tooltip and in a notification; after ``bound`` seconds it quits anyway and
says which runs were cut.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from desktop.activity import short
from desktop.alerts import Notice
from desktop.app_client import AppClient, AppError

log = logging.getLogger(__name__)

DEFAULT_BOUND = 30.0  # seconds
QUIT_KEY = "quit"  # the wait: withdrawn once over, never shown at a later start
CUT_KEY = "quit-cut"  # the runs cut: kept until seen
POLL_SECONDS = 0.1


@dataclass(frozen=True)
class QuitResult:
    stopped: tuple[str, ...]  # runs that ended at a safe point
    cut: tuple[str, ...]  # runs still going when the bound passed


def _names(runs: list[tuple[str, str]]) -> str:
    return ", ".join(f"“{short(task, 32) or run_id}”" for run_id, task in runs)


def waiting_text(runs: list[tuple[str, str]]) -> str:
    count = len(runs)
    return f"quitting: waiting for {count} run{'s' if count != 1 else ''} to stop ({_names(runs)})"


class SafeQuit:
    def __init__(
        self,
        app: AppClient,
        *,
        say: Callable[[str], None],
        post: Callable[[Notice], object],
        withdraw: Callable[[str], object] = lambda key: None,
        bound: float = DEFAULT_BOUND,
    ) -> None:
        self._app = app
        self._sleep = time.sleep
        self._say = say  # the tray's tooltip
        self._post = post
        self._withdraw = withdraw
        self._bound = bound

    def run(self) -> QuitResult:
        try:
            live = self._app.live_runs()
        except AppError as exc:
            log.warning("quit: cannot list the runs (%s); quitting", exc)
            return QuitResult((), ())
        if not live:
            return QuitResult((), ())
        text = waiting_text(live)
        self._say(text)
        self._post(
            Notice(
                key=QUIT_KEY,
                level="QUIT",
                title="Sparrow is quitting",
                body=f"Waiting for {_names(live)} to stop at a safe point "
                f"(at most {self._bound:g} s).",
                urgent=False,
            )
        )
        for run_id, _task in live:
            try:
                self._app.cancel(run_id)
            except AppError as exc:
                log.warning("quit: %s", exc)
        cut = self._wait(live)
        stopped = tuple(run_id for run_id, _ in live if run_id not in {c for c, _ in cut})
        self._withdraw(QUIT_KEY)
        if cut:
            message = f"quit after {self._bound:g} s: cut {_names(cut)} before a safe point"
            self._say(message)
            self._post(
                Notice(
                    key=CUT_KEY,
                    level="QUIT",
                    title="Sparrow quit before a safe point",
                    body=message[0].upper() + message[1:] + ".",
                    urgent=True,
                )
            )
        return QuitResult(stopped, tuple(run_id for run_id, _ in cut))

    def _wait(self, live: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The runs still live when all have ended or the bound has passed.

        A run is over once the server no longer drives it: its transcript
        closed and its row finished come before that (``live`` in the run)."""
        deadline = time.monotonic() + self._bound
        going = list(live)
        while going:
            going = [(run_id, task) for run_id, task in going if self._still_running(run_id)]
            if not going or time.monotonic() >= deadline:
                break
            self._sleep(POLL_SECONDS)
        return going

    def _still_running(self, run_id: str) -> bool:
        try:
            return bool(self._app.run(run_id).get("live"))
        except AppError:
            return False
