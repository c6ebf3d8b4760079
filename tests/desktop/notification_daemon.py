"""A notification daemon for tests: it owns ``org.freedesktop.Notifications`` on
a D-Bus bus and speaks the real interface (Desktop Notifications Specification
1.2: GetCapabilities, GetServerInformation, Notify, CloseNotification, and the
ActionInvoked / NotificationClosed signals), like the vendor-wire-format servers
the provider tests talk to.

Debian's ``notification-daemon`` shows notices but offers no way to press a
button from a test: a signal's sender is the bus connection that owns the name,
so only the daemon itself can say "Allow was pressed". This one records what it
is sent and presses buttons when the test says so, as a person would on screen.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from typing import Any

from jeepney import (
    DBusAddress,
    HeaderFields,
    MessageType,
    new_error,
    new_method_return,
    new_signal,
)
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"
CLOSED_DISMISSED, CLOSED_BY_CALL = 2, 3
NAME_PRIMARY_OWNER = 1


@dataclass
class Shown:
    id: int
    app: str
    title: str
    body: str
    actions: dict[str, str]  # key -> label
    hints: dict[str, Any]
    sender: str  # the connection that sent it: signals go back to it
    replaced: int = 0
    closed: bool = False


@dataclass
class NotificationDaemon:
    bus: str
    capabilities: tuple[str, ...] = ("actions", "body", "persistence")
    notices: list[Shown] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _outbox: queue.Queue[Any] = field(default_factory=queue.Queue)
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next_id: int = 1

    def start(self) -> NotificationDaemon:
        owned = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(owned,), daemon=True)
        self._thread.start()
        if not owned.wait(10):
            raise RuntimeError("the test notification daemon did not get its name")
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def showing(self) -> list[Shown]:
        with self._lock:
            return [n for n in self.notices if not n.closed]

    def find(self, title_part: str) -> Shown | None:
        return next((n for n in self.showing() if title_part in n.title), None)

    def press(self, ident: int, action: str) -> None:
        """A person clicks ``action`` on notice ``ident`` (then it closes)."""
        self._outbox.put((ident, action))

    def _serve(self, owned: threading.Event) -> None:
        with open_dbus_connection(self.bus) as connection:
            reply = connection.send_and_get_reply(message_bus.RequestName(NAME), timeout=5)
            if reply.body[0] != NAME_PRIMARY_OWNER:
                return
            owned.set()
            while not self._stop.is_set():
                while not self._outbox.empty():
                    self._invoke(connection, *self._outbox.get())
                try:
                    message = connection.receive(timeout=0.1)
                except TimeoutError:
                    continue
                if message.header.message_type == MessageType.method_call:
                    self._answer(connection, message)

    def _answer(self, connection: Any, message: Any) -> None:
        member = message.header.fields.get(HeaderFields.member)
        sender = message.header.fields.get(HeaderFields.sender, "")
        if member == "GetCapabilities":
            connection.send(new_method_return(message, "as", (list(self.capabilities),)))
        elif member == "GetServerInformation":
            info = ("Sparrow test daemon", "sparrow", "1", "1.2")
            connection.send(new_method_return(message, "ssss", info))
        elif member == "Notify":
            app, replaces, _icon, title, body, actions, hints, _timeout = message.body
            pairs = dict(zip(actions[::2], actions[1::2], strict=False))
            with self._lock:
                old = next((n for n in self.notices if n.id == replaces and not n.closed), None)
                if old is not None:
                    old.closed = True
                    ident = replaces
                else:
                    ident, self._next_id = self._next_id, self._next_id + 1
                self.notices.append(
                    Shown(ident, app, title, body, pairs, dict(hints), sender, replaced=replaces)
                )
            connection.send(new_method_return(message, "u", (ident,)))
        elif member == "CloseNotification":
            (ident,) = message.body
            shown = self._close(ident)
            connection.send(new_method_return(message))
            if shown is not None:
                self._signal(
                    connection, shown.sender, "NotificationClosed", "uu", (ident, CLOSED_BY_CALL)
                )
        else:
            connection.send(new_error(message, "org.freedesktop.DBus.Error.UnknownMethod"))

    def _close(self, ident: int) -> Shown | None:
        with self._lock:
            shown = next((n for n in self.notices if n.id == ident and not n.closed), None)
            if shown is not None:
                shown.closed = True
            return shown

    def _invoke(self, connection: Any, ident: int, action: str) -> None:
        shown = self._close(ident)
        if shown is None:
            return
        self._signal(connection, shown.sender, "ActionInvoked", "us", (ident, action))
        self._signal(
            connection, shown.sender, "NotificationClosed", "uu", (ident, CLOSED_DISMISSED)
        )

    @staticmethod
    def _signal(
        connection: Any, to: str, member: str, signature: str, body: tuple[Any, ...]
    ) -> None:
        signal = new_signal(DBusAddress(PATH, interface=INTERFACE), member, signature, body)
        signal.header.fields[HeaderFields.destination] = to  # as real daemons: to the sender
        connection.send(signal)
