"""The tray's menu, icon and tooltip as plain data: a pure function of the
app's state. The Qt tray (:mod:`desktop.tray`) renders what this returns, and
tests can read and press the same items without a tray host.

Actions are strings: ``open``, ``open:RUN``, ``monitor``, ``stop:RUN``,
``pause_all``, ``quit``; an empty action is a separator.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop.activity import APPROVAL, IDLE, RUNNING, WARNING, Activity, short
from desktop.alerts import CRITICAL, TrayState
from desktop.alerts import WARNING as MONITOR_WARNING

OPEN, MONITOR, PAUSE_ALL, QUIT = "open", "monitor", "pause_all", "quit"
STOP_PREFIX, OPEN_PREFIX = "stop:", "open:"
APP = "Sparrow"

# The icon variants, worst first: what the tray shows is the first that applies.
ICON_STATES = (APPROVAL, WARNING, RUNNING, IDLE)


@dataclass(frozen=True)
class MenuItem:
    text: str
    action: str = ""  # "" with text "": a separator
    enabled: bool = True

    @property
    def separator(self) -> bool:
        return not self.text and not self.action


SEPARATOR = MenuItem("")


def menu_items(activity: Activity) -> tuple[MenuItem, ...]:
    items = [MenuItem("Open window", OPEN), MenuItem("Monitor", MONITOR)]
    quitting = bool(activity.quitting)
    if activity.approvals or activity.runs:
        items.append(SEPARATOR)
    asking = {w.run_id for w in activity.approvals}
    for waiting in activity.approvals:
        task = short(activity.task_of(waiting.run_id) or waiting.run_id, 32)
        items.append(MenuItem(f"Answer: {waiting.tool} in “{task}”…", OPEN_PREFIX + waiting.run_id))
    for run in activity.runs:
        mark = " (asks)" if run.run_id in asking else ""
        items.append(
            MenuItem(
                f"Stop “{short(run.task or run.run_id)}”{mark}",
                STOP_PREFIX + run.run_id,
                enabled=not quitting,
            )
        )
    items.append(SEPARATOR)
    items.append(MenuItem("Pause all (emergency stop)", PAUSE_ALL, enabled=not quitting))
    items.append(MenuItem("Quitting…" if quitting else "Quit", QUIT, enabled=not quitting))
    return tuple(items)


def icon_state(activity: Activity, monitor: TrayState | None = None) -> str:
    """idle, running, approval or warning: the runs' state, or warning when a
    session the Monitor watches is at warning or worse."""
    state = activity.state
    monitor_warns = monitor is not None and monitor.level in (MONITOR_WARNING, CRITICAL)
    if monitor_warns and ICON_STATES.index(WARNING) < ICON_STATES.index(state):
        state = WARNING
    return state


def tooltip(activity: Activity, monitor: TrayState | None = None) -> str:
    if activity.quitting:
        return f"{APP}: {activity.quitting}"
    runs = len(activity.runs)
    if runs:
        parts = [f"{runs} run{'s' if runs != 1 else ''} going"]
        if activity.approvals:
            count = len(activity.approvals)
            parts.append(f"{count} approval{'s' if count != 1 else ''} waiting")
        if activity.warned:
            parts.append("context warning")
        line = f"{APP}: " + ", ".join(parts)
    else:
        line = f"{APP}: idle"
    if monitor is not None and monitor.sessions and monitor.connected:
        line += "\n" + monitor.tooltip
    return line
