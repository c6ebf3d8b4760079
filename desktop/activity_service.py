"""The runs seen from the desktop: every run's events from the app's own
``/ws`` feed the :class:`~desktop.activity.ActivityModel`, whose state goes to
the tray and whose notices go through the :class:`~desktop.notices.NoticeDesk`
(kept until shown, withdrawn when over). The notices' buttons come back here:
Allow and Deny answer through the server's approval route, recorded as
``by: notification``; a click opens the window on the notice's run.

Started once the server serves; stopped with the app. Safe from any thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from desktop.activity import ALLOW, DENY, Activity, ActivityModel, Changes, View
from desktop.alerts import Notice
from desktop.app_client import AppClient, AppError
from desktop.monitor_client import MonitorClient
from desktop.notices import RETRY_SECONDS, NoticeDesk
from desktop.notify import DEFAULT_ACTION, Notifier

log = logging.getLogger(__name__)

T = TypeVar("T")
ShowActivity = Callable[[Activity], None]
OpenRun = Callable[[str], None]


class ActivityService:
    def __init__(
        self,
        port: int,
        token: str,
        *,
        state_dir: Path,
        bus: str | None = None,
        icon: str = "",
        warning_ratio: float = 0.8,
        open_run: OpenRun | None = None,
        retry_seconds: float | None = None,
    ) -> None:
        self.model = ActivityModel(warning_ratio=warning_ratio)
        self.app = AppClient(port, token)
        self._open_run = open_run
        self._show: ShowActivity | None = None
        self._lock = threading.Lock()
        self.notifier = Notifier(
            bus=bus, icon=icon, on_action=self._on_action, on_daemon=self._on_daemon
        )
        self.desk = NoticeDesk(
            state_dir, self.notifier, retry_seconds=retry_seconds or RETRY_SECONDS
        )
        self.answered: list[tuple[str, str, str]] = []  # (run, call, decision), for the log
        self.client = MonitorClient(
            port,
            token,
            self._on_event,
            path="/ws",
            hello=({"op": "subscribe", "run_id": "*"},),
            on_connect=self._on_connect,
        )

    def start(self) -> None:
        if self.notifier.available():
            try:
                self.notifier.connect()  # hear the daemon come, even before a notice
            except Exception as exc:
                log.info("notifications: no session bus yet (%s)", exc)
        self.desk.retry()  # what an earlier run of the app could not show
        self.desk.start()
        self.client.start()

    def stop(self) -> None:
        self.client.stop()
        self.desk.stop()
        self.notifier.stop()

    def set_show(self, show: ShowActivity | None) -> None:
        with self._lock:
            self._show = show
            activity = self.model.activity
        if show is not None:
            show(activity)

    @property
    def activity(self) -> Activity:
        with self._lock:
            return self.model.activity

    def set_quitting(self, text: str) -> None:
        self._update(lambda: self.model.set_quitting(text))

    # --- events --------------------------------------------------------------

    def _on_connect(self) -> None:
        """Events missed while the socket was down (or before it first connected):
        read the runs and their waiting approvals as they are now. The events
        that follow this read come after it on the same thread."""
        try:
            runs = self.app.runs()
            listed = {str(run.get("id")) for run in runs}
            followed = [run.run_id for run in self.activity.runs if run.run_id not in listed]
            runs += [info for info in map(self._run_or_none, followed) if info]
            approvals = {
                str(run.get("id")): self.app.approvals(str(run.get("id")))
                if run.get("waiting")
                else []
                for run in runs
                if run.get("live")
            }
        except AppError as exc:
            log.info("could not read the runs after connecting: %s", exc)
            return
        self._apply(self._update(lambda: self.model.resync(runs, approvals)))

    def _run_or_none(self, run_id: str) -> dict[str, object]:
        try:
            return self.app.run(run_id)
        except AppError:
            return {}

    def _on_event(self, event: dict[str, object]) -> None:
        self._apply(self._update(lambda: self.model.handle(event)))

    def set_view(self, view: View) -> None:
        """The window's state or its page's run changed (from any thread)."""
        self._apply(self._update(lambda: self.model.set_view(view)))

    def _apply(self, changes: Changes) -> None:
        for key in changes.withdrawn:
            self.desk.withdraw(key)
        for notice in changes.notices:
            self.post(notice)

    def post(self, notice: Notice) -> bool:
        return self.desk.post(notice)

    def _update(self, change: Callable[[], T]) -> T:
        with self._lock:
            result = change()
            activity, show = self.model.activity, self._show
        if show is not None:
            show(activity)
        return result

    # --- from the notifications ----------------------------------------------

    def _on_daemon(self, present: bool) -> None:
        if present:
            # A daemon took the name: show what waited (off the signal thread,
            # which must stay free to hear the daemon's replies).
            threading.Thread(target=self.desk.retry, name="notice-retry", daemon=True).start()

    def _on_action(self, key: str, action: str) -> None:
        threading.Thread(
            target=self._act, args=(key, action), name="notice-action", daemon=True
        ).start()

    def _act(self, key: str, action: str) -> None:
        parts = key.split(":")
        if parts[0] == "approval" and len(parts) == 3 and action in (ALLOW, DENY):
            run_id, call_id = parts[1], parts[2]
            decision = "allow_once" if action == ALLOW else "deny"
            try:
                self.app.answer(run_id, call_id, decision)
                self.answered.append((run_id, call_id, decision))
            except AppError as exc:  # answered elsewhere first, or timed out
                log.info("the notification's answer was not taken: %s", exc)
            return
        if action == DEFAULT_ACTION and self._open_run is not None and len(parts) >= 2:
            self._open_run(parts[1])
