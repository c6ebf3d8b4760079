"""What the app's runs are doing, as a pure model for the tray and the notices.

Fed every event of every run (the app's own ``/ws``, subscribed to "*"), it
keeps the live runs, the approvals they wait on and the runs past the context
warning, and says what to notify and what to withdraw:

- approval needed (with Allow and Deny buttons), withdrawn once answered
  anywhere or once its run ends;
- run finished (completed or failed) and hard stop; a run the user cancelled or the
  emergency stop ended is not announced: the user did it;
- context warning, once per run, when a ``context_updated`` passes the ratio.

No Qt, no D-Bus, no sockets: :mod:`desktop.activity_service` feeds it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from desktop.alerts import Notice

IDLE, RUNNING, APPROVAL, WARNING = "idle", "running", "approval", "warning"
ALLOW, DENY = "allow", "deny"
APPROVAL_ACTIONS = ((ALLOW, "Allow"), (DENY, "Deny"))
ANSWER_SHOWN = 200  # characters of the final answer in a run-finished notice
TASK_SHOWN = 48  # characters of a task shown in a menu or a title


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
        self._warned: set[str] = set()
        self._answers: dict[str, str] = {}  # live run -> its model's last words
        self._quitting = ""
        self.activity = Activity()

    def seed(self, runs: list[tuple[str, str]]) -> None:
        """The runs live when the socket (re)connects (their events so far are missed)."""
        for run_id, task in runs:
            self._tasks.setdefault(run_id, task)
        self._update()

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
            call_id = str(event.get("call_id"))
            self._tasks.setdefault(run_id, "")
            self._waiting[(run_id, call_id)] = Waiting(run_id, call_id, str(event.get("tool")))
            changes.notices.append(approval_notice(event, self._tasks[run_id]))
        elif kind == "approval_resolved":
            call_id = str(event.get("call_id"))
            if self._waiting.pop((run_id, call_id), None) is not None:
                changes.withdrawn.append(approval_key(run_id, call_id))
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

    def _finish(self, run_id: str, event: Mapping[str, Any], changes: Changes) -> None:
        task = self._tasks.pop(run_id, "")
        if run_id in self._warned:  # its warning is over: the run-finished notice follows
            self._warned.discard(run_id)
            changes.withdrawn.append(f"context:{run_id}")
        answer = self._answers.pop(run_id, "")
        for key in [key for key in self._waiting if key[0] == run_id]:
            del self._waiting[key]
            changes.withdrawn.append(approval_key(*key))
        status, reason = str(event.get("status")), str(event.get("reason") or "")
        name = short(task) or run_id
        if status == "stopped" and reason.startswith("hard stop"):
            title, urgent = f"Hard stop: {name}", True
        elif status in ("completed", "failed"):
            title = f"Run {'finished' if status == 'completed' else 'failed'}: {name}"
            urgent = False
        else:
            return  # cancelled: by the user, the emergency stop or Quit, who know it
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
