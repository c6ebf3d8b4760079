"""Desktop notifications through D-Bus ``org.freedesktop.Notifications.Notify``.

Uses jeepney (pure Python D-Bus; already installed on Linux as keyring's
Secret Service transport), with a blocking connection opened per notice: a few
notices an hour do not need a resident connection. A later notice of the same
session replaces the earlier one on screen. Any failure (no notification
daemon, another OS) is logged and :meth:`Notifier.send` returns None: a missing
notification never breaks the window. With no session bus at all (a bare
server, an SSH login) notifications are off: said once, then nothing.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from desktop.alerts import Notice

log = logging.getLogger(__name__)

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"
APP_NAME = "Sparrow"
URGENCY_NORMAL, URGENCY_CRITICAL = 1, 2
TIMEOUT = 3.0  # seconds for the daemon to answer
SESSION_BUS_ENV = "DBUS_SESSION_BUS_ADDRESS"
NO_SESSION_BUS = (
    f"desktop notifications are off: no D-Bus session bus ({SESSION_BUS_ENV} is not set)"
)


def _call(method: str, signature: str | None, body: tuple[Any, ...], bus: str | None) -> Any:
    from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    address = DBusAddress(OBJECT_PATH, bus_name=BUS_NAME, interface=INTERFACE)
    with open_dbus_connection(bus or "SESSION") as connection:
        reply = connection.send_and_get_reply(
            new_method_call(address, method, signature, body), timeout=TIMEOUT
        )
    if reply.header.message_type == MessageType.error:
        name = reply.header.fields.get(HeaderFields.error_name, "an error")
        detail = f": {reply.body[0]}" if reply.body else ""
        raise RuntimeError(f"{method} answered {name}{detail}")
    return reply.body


def server_information(bus: str | None = None) -> tuple[str, str, str, str]:
    """(name, vendor, version, spec version) of the running notification daemon."""
    name, vendor, version, spec = _call("GetServerInformation", None, (), bus)
    return str(name), str(vendor), str(version), str(spec)


class Notifier:
    """Sends :class:`Notice` objects; safe from any thread."""

    def __init__(self, *, bus: str | None = None, icon: str = "") -> None:
        self._bus = bus  # a D-Bus address; None: the session bus of the environment
        self._icon = icon
        self._lock = threading.Lock()
        self._shown: dict[str, int] = {}  # session key -> id of its notification
        self._said_off = False

    def send(self, notice: Notice) -> int | None:
        """Show ``notice``; the daemon's id for it, or None when it could not be shown."""
        if self._bus is None and not os.environ.get(SESSION_BUS_ENV):
            # jeepney would raise a bare KeyError for the variable, at every notice.
            self._say_off()
            return None
        with self._lock:
            replaces = self._shown.get(notice.key, 0)
        urgency = URGENCY_CRITICAL if notice.urgent else URGENCY_NORMAL
        hints = {"urgency": ("y", urgency)}
        body: tuple[Any, ...] = (
            APP_NAME,
            replaces,
            self._icon,
            notice.title,
            notice.body,
            [],
            hints,
            -1,
        )
        try:
            (ident,) = _call("Notify", "susssasa{sv}i", body, self._bus)
        except Exception as exc:
            log.warning("no desktop notification (%s: %s)", type(exc).__name__, exc)
            return None
        with self._lock:
            self._shown[notice.key] = int(ident)
        return int(ident)

    def _say_off(self) -> None:
        with self._lock:
            said, self._said_off = self._said_off, True
        if not said:
            log.warning(NO_SESSION_BUS)
