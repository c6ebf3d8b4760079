"""Context warnings delivered on the desktop: the app's own ``/ws/monitor`` feeds
the alert model, whose notices go to the notifier and whose state goes to the
tray (when there is one). Started once the server serves; stopped with the window."""

from __future__ import annotations

import threading
from collections.abc import Callable

from desktop.alerts import AlertModel, Notice, TrayState
from desktop.monitor_client import MonitorClient

Send = Callable[[Notice], object]
ShowState = Callable[[TrayState], None]


class AlertService:
    def __init__(
        self,
        port: int,
        token: str,
        *,
        send: Send,
        model: AlertModel | None = None,
        show_state: ShowState | None = None,
    ) -> None:
        self.model = model if model is not None else AlertModel()
        self._send = send
        self._show_state = show_state
        self._lock = threading.Lock()
        self.client = MonitorClient(
            port,
            token,
            self._on_message,
            on_connect=self._on_connect,
            on_disconnect=self._on_disconnect,
            query={"levels": "kept"},  # a crossing of the first poll comes too
        )

    def start(self) -> None:
        self.client.start()

    def stop(self) -> None:
        self.client.stop()

    def set_show_state(self, show_state: ShowState | None) -> None:
        """Attach (or detach) the tray; it is shown the current state at once."""
        with self._lock:
            self._show_state = show_state
            state = self.model.tray
        if show_state is not None:
            show_state(state)

    def _on_message(self, message: dict[str, object]) -> None:
        with self._lock:
            notices = self.model.handle(message)
            state, show = self.model.tray, self._show_state
        if show is not None:
            show(state)
        for notice in notices:
            self._send(notice)

    def _on_connect(self) -> None:
        self._update(self.model.connected)

    def _on_disconnect(self) -> None:
        self._update(self.model.disconnected)

    def _update(self, change: Callable[[], None]) -> None:
        with self._lock:
            change()
            state, show = self.model.tray, self._show_state
        if show is not None:
            show(state)
