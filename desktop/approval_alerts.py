"""A desktop notification when a run waits for an approval: the window may be
behind another one, and an unanswered approval is a deny after a while.

Follows every run's events on the app's own ``/ws`` (subscribed to "*")."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from desktop.alerts import Notice
from desktop.monitor_client import MonitorClient

Send = Callable[[Notice], object]
LEVEL = "APPROVAL"


def approval_notice(event: dict[str, Any], now: float | None = None) -> Notice | None:
    """The notice for an ``approval_requested`` event; None for any other message."""
    if event.get("type") != "approval_requested":
        return None
    tool = str(event.get("tool") or "a tool")
    reason = str(event.get("reason") or "")
    expires = event.get("expires_at")
    left = ""
    if isinstance(expires, int | float):
        minutes = max(0, round((expires - (time.time() if now is None else now)) / 60))
        left = f" Without an answer in {minutes} min it is denied." if minutes else ""
    return Notice(
        key=f"approval:{event.get('run_id')}:{event.get('call_id')}",
        level=LEVEL,
        title=f"Sparrow asks: allow {tool}?",
        body=f"{reason}. Answer in the Sparrow window.{left}".lstrip(". "),
        urgent=True,
    )


class ApprovalAlerts:
    def __init__(self, port: int, token: str, *, send: Send) -> None:
        self._send = send
        self.client = MonitorClient(
            port,
            token,
            self._on_message,
            path="/ws",
            hello=({"op": "subscribe", "run_id": "*"},),
        )

    def start(self) -> None:
        self.client.start()

    def stop(self) -> None:
        self.client.stop()

    def _on_message(self, message: dict[str, Any]) -> None:
        notice = approval_notice(message)
        if notice is not None:
            self._send(notice)
