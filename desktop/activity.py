"""What the app's runs are doing, as a pure model for the tray and the notices.

Fed every event of every run (the app's own ``/ws``, subscribed to "*"), it
keeps the live runs, the approvals they wait on and the runs past the context
warning, and says what to notify and what to withdraw:

- approval needed (with Allow and Deny buttons), withdrawn once answered
  anywhere or once its run ends;
- run finished (completed or failed) and hard stop; a run the user cancelled or the
  emergency stop ended is not announced: the user did it;
- context warning, once per run, when a ``context_updated`` passes the ratio.

A notice about the run the window has in front of the user (visible, focused,
its page on that run) is not sent: they see it there. An approval skipped so
is noticed once the window loses focus, if it still waits; the tray's menu
lists it in any case. When the socket (re)connects, :meth:`ActivityModel.resync`
reads the runs and their waiting approvals as they are now: approvals asked
meanwhile are noticed, those answered meanwhile withdrawn, runs that ended
meanwhile announced.

No Qt, no D-Bus, no sockets: :mod:`desktop.activity_service` feeds it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from desktop.alerts import Notice

IDLE, RUNNING, APPROVAL, WARNING = "idle", "running", "approval", "warning"
ALLOW, DENY = "allow", "deny"
APPROVAL_ACTIONS = ((ALLOW, "Allow"), (DENY, "Deny"))
ANSWER_SHOWN = 200  # characters of the final answer in a run-finished notice
TASK_SHOWN = 48  # characters of a task shown in a menu or a title
ENDED_KEPT = 500  # run ids remembered as announced (a late event must not say it twice)


def short(task: str, limit: int = TASK_SHOWN) -> str:
    line = " ".join(task.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class LiveRun:
    run_id: str
    task: str


@dataclass(frozen=True)
class Waiting:
    run_id: str
    call_id: str
    tool: str


@dataclass(frozen=True)
class View:
    """What the window shows: the run its page is on, whether it is on screen
    (shown, not minimised) and whether it has the focus."""

    run_id: str = ""
    visible: bool = False
    focused: bool = False

    def in_front(self, run_id: str) -> bool:
        return bool(run_id) and self.visible and self.focused and run_id == self.run_id


@dataclass(frozen=True)
class Activity:
    runs: tuple[LiveRun, ...] = ()
    approvals: tuple[Waiting, ...] = ()
    warned: frozenset[str] = frozenset()  # live runs past the context warning
    quitting: str = ""  # while Quit waits for a safe point: what it waits for

    @property
    def state(self) -> str:
        if self.approvals:
            return APPROVAL
        live = {run.run_id for run in self.runs}
        if self.warned & live:
            return WARNING
        return RUNNING if self.runs else IDLE

    def task_of(self, run_id: str) -> str:
        return next((run.task for run in self.runs if run.run_id == run_id), "")


@dataclass
class Changes:
    notices: list[Notice] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)  # keys of notices now over


def approval_key(run_id: str, call_id: str) -> str:
    return f"approval:{run_id}:{call_id}"


def approval_notice(event: Mapping[str, Any], task: str, now: float | None = None) -> Notice:
    tool = str(event.get("tool") or "a tool")
    reason = str(event.get("reason") or "")
    expires = event.get("expires_at")
    left = ""
    if isinstance(expires, int | float) and not isinstance(expires, bool):
        minutes = max(0, round((expires - (time.time() if now is None else now)) / 60))
        left = f" Without an answer in {minutes} min it is denied." if minutes else ""
    about = f"“{short(task)}”: " if task else ""
    return Notice(
        key=approval_key(str(event.get("run_id")), str(event.get("call_id"))),
        level="APPROVAL",
        title=f"Sparrow asks: allow {tool}?",
        body=f"{about}{reason}.{left}".replace("..", ".").lstrip(". "),
        urgent=True,
        run_id=str(event.get("run_id") or ""),
        actions=APPROVAL_ACTIONS,
    )


class ActivityModel:
    """Feed it every run event; read :attr:`activity`; send and withdraw what it returns."""

    def __init__(self, *, warning_ratio: float = 0.8) -> None:
        self._warning_ratio = warning_ratio
        self._tasks: dict[str, str] = {}  # live run -> task, in start order
        self._waiting: dict[tuple[str, str], Waiting] = {}
        self._asked: dict[tuple[str, str], Mapping[str, Any]] = {}  # their events
        self._noticed: set[tuple[str, str]] = set()  # waiting approvals with a notice out
        self._ended: dict[str, None] = {}  # runs whose end was announced, oldest first
        self._view = View()
        self._warned: set[str] = set()
        self._answers: dict[str, str] = {}  # live run -> its model's last words
        self._quitting = ""
        self.activity = Activity()

    def resync(
        self,
        runs: Sequence[Mapping[str, Any]],
        approvals: Mapping[str, Sequence[Mapping[str, Any]]],
    ) -> Changes:
        """The state when the socket (re)connects, whose events so far were missed.

        ``runs``: RunInfo dicts (``GET /api/runs``, plus any run this model
        follows that the list left out); ``approvals``: for each live run, the
        calls waiting now (``GET /api/runs/{id}/approvals``, ``[]`` for none)."""
        changes = Changes()
        listed = {str(run.get("id")): run for run in runs}
        for run_id in list(self._tasks):
            info = listed.get(run_id)
            if info is not None and not info.get("live") and info.get("status") != "running":
                self._finish(run_id, {**info, "type": "run_finished"}, changes)
        for run_id, info in listed.items():
            if info.get("live"):
                self._tasks.setdefault(run_id, str(info.get("task") or ""))
        now = {
            (run_id, str(ask.get("call_id"))): ask
            for run_id, asks in approvals.items()
            for ask in asks
        }
        for key in [key for key in self._waiting if key[0] in approvals and key not in now]:
            self._drop_approval(key, changes)  # answered (or timed out) meanwhile
        for key, ask in now.items():
            if key not in self._waiting:
                self._add_approval(key, {**ask, "run_id": key[0]})
            self._notice_approval(key, changes)
        self._update()
        return changes

    def set_view(self, view: View) -> Changes:
        """The window's state changed: approvals skipped while in front are noticed
        once they are not."""
        self._view = view
        changes = Changes()
        for key in list(self._waiting):
            self._notice_approval(key, changes)
        return changes

    def set_quitting(self, text: str) -> None:
        self._quitting = text
        self._update()

    def handle(self, event: Mapping[str, Any]) -> Changes:
        changes = Changes()
        kind, run_id = event.get("type"), event.get("run_id")
        if not isinstance(run_id, str):
            return changes
        if kind == "run_started":
            self._tasks[run_id] = str(event.get("task") or "")
        elif kind == "approval_requested":
            key = (run_id, str(event.get("call_id")))
            self._add_approval(key, event)
            self._notice_approval(key, changes)
        elif kind == "approval_resolved":
            self._drop_approval((run_id, str(event.get("call_id"))), changes)
        elif kind == "message_added":
            message = event.get("message")
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                text = str(message.get("text") or "").strip()
                if text:
                    self._answers[run_id] = text
            return changes  # nothing the tray shows changed
        elif kind == "context_updated":
            notice = self._context(run_id, event)
            if notice is not None:
                changes.notices.append(notice)
        elif kind == "run_finished":
            self._finish(run_id, event, changes)
        else:
            return changes
        self._update()
        return changes

    def _context(self, run_id: str, event: Mapping[str, Any]) -> Notice | None:
        ratio = event.get("ratio")
        if run_id in self._warned or not isinstance(ratio, int | float):
            return None
        if isinstance(ratio, bool) or ratio < self._warning_ratio:
            return None
        self._warned.add(run_id)
        if self._view.in_front(run_id):
            return None  # the run's view shows its context meter
        task = self._tasks.get(run_id, "")
        tokens, window = event.get("tokens"), event.get("window")
        figures = f"{ratio:.0%} of its context window"
        if isinstance(tokens, int) and isinstance(window, int):
            figures += f" ({tokens:,} of {window:,} tokens)"
        return Notice(
            key=f"context:{run_id}",
            level=WARNING,
            title=f"Context warning: {short(task) or run_id}",
            body=f"The run has filled {figures}; it compacts past the reserve.",
            urgent=False,
            run_id=run_id,
        )

    def _add_approval(self, key: tuple[str, str], event: Mapping[str, Any]) -> None:
        self._tasks.setdefault(key[0], "")
        self._waiting[key] = Waiting(key[0], key[1], str(event.get("tool")))
        self._asked[key] = event

    def _notice_approval(self, key: tuple[str, str], changes: Changes) -> None:
        """Notice a waiting approval, once, unless its run is in front of the user."""
        if key in self._noticed or key not in self._waiting or self._view.in_front(key[0]):
            return
        self._noticed.add(key)
        changes.notices.append(approval_notice(self._asked[key], self._tasks.get(key[0], "")))

    def _drop_approval(self, key: tuple[str, str], changes: Changes) -> None:
        self._asked.pop(key, None)
        self._noticed.discard(key)
        if self._waiting.pop(key, None) is not None:
            changes.withdrawn.append(approval_key(*key))

    def _finish(self, run_id: str, event: Mapping[str, Any], changes: Changes) -> None:
        if run_id in self._ended and run_id not in self._tasks:
            return  # announced already, when a reconnection found it ended
        self._ended[run_id] = None
        while len(self._ended) > ENDED_KEPT:
            del self._ended[next(iter(self._ended))]
        task = self._tasks.pop(run_id, "")
        if run_id in self._warned:  # its warning is over: the run-finished notice follows
            self._warned.discard(run_id)
            changes.withdrawn.append(f"context:{run_id}")
        answer = self._answers.pop(run_id, "")
        for key in [key for key in self._waiting if key[0] == run_id]:
            self._drop_approval(key, changes)
        status, reason = str(event.get("status")), str(event.get("reason") or "")
        name = short(task) or run_id
        if status == "stopped" and reason.startswith("hard stop"):
            title, urgent = f"Hard stop: {name}", True
        elif status in ("completed", "failed"):
            title = f"Run {'finished' if status == 'completed' else 'failed'}: {name}"
            urgent = False
        else:
            return  # cancelled: by the user, the emergency stop or Quit, who know it
        if self._view.in_front(run_id):
            return  # the user watches it end
        turns = event.get("turns")
        body = short(answer, ANSWER_SHOWN) if status == "completed" and answer else reason or status
        if isinstance(turns, int) and turns and not (status == "completed" and answer):
            body += f" ({turns} turn{'s' if turns != 1 else ''})"
        changes.notices.append(
            Notice(
                key=f"run:{run_id}",
                level=status.upper(),
                title=title,
                body=body,
                urgent=urgent,
                run_id=run_id,
            )
        )

    def _update(self) -> None:
        self.activity = replace(
            self.activity,
            runs=tuple(LiveRun(run_id, task) for run_id, task in self._tasks.items()),
            approvals=tuple(self._waiting.values()),
            warned=frozenset(self._warned),
            quitting=self._quitting,
        )
