"""Desktop notifications through D-Bus ``org.freedesktop.Notifications``.

Uses jeepney (pure Python D-Bus; already installed on Linux as keyring's
Secret Service transport). One resident connection sends the notices and hears
the daemon: its ``ActionInvoked`` and ``NotificationClosed`` signals are
addressed to the connection that sent the notice, so a connection per notice
would never hear a button pressed. The bus's ``NameOwnerChanged`` for the
daemon's name says when a daemon comes (pending notices can be shown) or goes.

Buttons (Allow, Deny) go with a notice only where the daemon advertises the
``actions`` capability; a notice about a run also gets the ``default`` action
(clicking it). A later notice with the key of an earlier one replaces it on
screen; :meth:`Notifier.close` withdraws one. Any failure (no daemon, another
OS) is logged and :meth:`Notifier.send` returns None: a missing notification
never breaks the window. With no session bus at all (a bare server, an SSH
login) notifications are off: said once, then nothing.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

from desktop.alerts import Notice

log = logging.getLogger(__name__)

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"
APP_NAME = "Sparrow"
DEFAULT_ACTION = "default"
URGENCY_NORMAL, URGENCY_CRITICAL = 1, 2
TIMEOUT = 3.0  # seconds for the daemon to answer
SESSION_BUS_ENV = "DBUS_SESSION_BUS_ADDRESS"
NO_SESSION_BUS = (
    f"desktop notifications are off: no D-Bus session bus ({SESSION_BUS_ENV} is not set)"
)

OnAction = Callable[[str, str], None]  # (notice key, action key)
OnDaemon = Callable[[bool], None]  # a daemon came (True) or went (False)


def _check(reply: Any, method: str) -> Any:
    from jeepney import HeaderFields, MessageType

    if reply.header.message_type == MessageType.error:
        name = reply.header.fields.get(HeaderFields.error_name, "an error")
        detail = f": {reply.body[0]}" if reply.body else ""
        raise RuntimeError(f"{method} answered {name}{detail}")
    return reply.body


def _call(method: str, signature: str | None, body: tuple[Any, ...], bus: str | None) -> Any:
    """One call on a connection of its own (for one-off questions and tests)."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    address = DBusAddress(OBJECT_PATH, bus_name=BUS_NAME, interface=INTERFACE)
    with open_dbus_connection(bus or "SESSION") as connection:
        reply = connection.send_and_get_reply(
            new_method_call(address, method, signature, body), timeout=TIMEOUT
        )
    return _check(reply, method)


def server_information(bus: str | None = None) -> tuple[str, str, str, str]:
    """(name, vendor, version, spec version) of the running notification daemon."""
    name, vendor, version, spec = _call("GetServerInformation", None, (), bus)
    return str(name), str(vendor), str(version), str(spec)


def _router_class() -> Any:
    """jeepney's threaded router, whose receiving thread ends quietly when the
    bus goes away (the next call then opens a new connection)."""
    from jeepney.io.threading import DBusRouter

    class Router(DBusRouter):  # type: ignore[misc]
        broken = False

        def _receiver(self) -> None:
            try:
                super()._receiver()
            except (OSError, ValueError) as exc:
                self.broken = True
                log.info("notifications: the D-Bus connection ended (%s)", exc)

    return Router


class Notifier:
    """Sends :class:`Notice` objects and hears their buttons; safe from any thread."""

    def __init__(
        self,
        *,
        bus: str | None = None,
        icon: str = "",
        on_action: OnAction | None = None,
        on_daemon: OnDaemon | None = None,
    ) -> None:
        self._bus = bus  # a D-Bus address; None: the session bus of the environment
        self._icon = icon
        self._on_action = on_action
        self._on_daemon = on_daemon
        self._lock = threading.Lock()
        self._shown: dict[str, int] = {}  # notice key -> id of its notification
        self._keys: dict[int, str] = {}  # id -> notice key
        self._capabilities: frozenset[str] | None = None
        self._router: Any = None  # jeepney.io.threading.DBusRouter, opened at first use
        self._signals: queue.Queue[Any] = queue.Queue(maxsize=1000)
        self._filters: list[Any] = []
        self._listener: threading.Thread | None = None
        self._stop = threading.Event()
        self._said_off = False

    # --- connection ---------------------------------------------------------

    def _connected(self) -> Any:
        """The resident router, opened (with its signal subscriptions) when needed."""
        from jeepney import MatchRule
        from jeepney.bus_messages import message_bus
        from jeepney.io.threading import open_dbus_connection

        with self._lock:
            if self._router is not None and not self._router.broken:
                return self._router
        if self._router is not None:
            self._drop(self._router)
        with self._lock:
            connection = open_dbus_connection(self._bus or "SESSION")
            router = _router_class()(connection)
            rules = [
                MatchRule(type="signal", interface=INTERFACE, path=OBJECT_PATH),
                MatchRule(
                    type="signal",
                    sender="org.freedesktop.DBus",
                    interface="org.freedesktop.DBus",
                    member="NameOwnerChanged",
                ),
            ]
            rules[1].add_arg_condition(0, BUS_NAME)
            for rule in rules:
                self._filters.append(router.filter(rule, queue=self._signals))
                _check(
                    router.send_and_get_reply(message_bus.AddMatch(rule), timeout=TIMEOUT),
                    "AddMatch",
                )
            self._router = router
            if self._listener is None:
                self._listener = threading.Thread(
                    target=self._listen, name="notify-signals", daemon=True
                )
                self._listener.start()
            return router

    def connect(self) -> None:
        """Open the connection now, so a daemon's coming is heard before any notice."""
        self._connected()

    def _method(self, method: str, signature: str | None, body: tuple[Any, ...]) -> Any:
        from jeepney import DBusAddress, new_method_call

        address = DBusAddress(OBJECT_PATH, bus_name=BUS_NAME, interface=INTERFACE)
        router = self._connected()
        try:
            reply = router.send_and_get_reply(
                new_method_call(address, method, signature, body), timeout=TIMEOUT
            )
        except Exception:
            self._drop(router)  # the bus went away: the next call opens a new connection
            raise
        return _check(reply, method)

    def _drop(self, router: Any) -> None:
        with self._lock:
            if self._router is not router:
                return
            self._router = None
            filters, self._filters = self._filters, []
        for handle in filters:
            handle.close()
        try:
            router.close()
            router.conn.close()
        except Exception:
            pass

    def stop(self) -> None:
        self._stop.set()
        router = self._router
        if router is not None:
            self._drop(router)
        if self._listener is not None:
            self._listener.join(5)

    # --- notices -------------------------------------------------------------

    def available(self) -> bool:
        if self._bus is None and not os.environ.get(SESSION_BUS_ENV):
            # jeepney would raise a bare KeyError for the variable, at every notice.
            self._say_off()
            return False
        return True

    def capabilities(self) -> frozenset[str]:
        if self._capabilities is None:
            (caps,) = self._method("GetCapabilities", None, ())
            self._capabilities = frozenset(str(c) for c in caps)
        return self._capabilities

    def send(self, notice: Notice) -> int | None:
        """Show ``notice``; the daemon's id for it, or None when it could not be shown."""
        if not self.available():
            return None
        with self._lock:
            replaces = self._shown.get(notice.key, 0)
        urgency = URGENCY_CRITICAL if notice.urgent else URGENCY_NORMAL
        hints: dict[str, tuple[str, Any]] = {"urgency": ("y", urgency)}
        try:
            actions: list[str] = []
            text = notice.body
            if "actions" in self.capabilities():
                if notice.run_id:
                    actions += [DEFAULT_ACTION, "Open"]
                for key, label in notice.actions:
                    actions += [key, label]
            elif notice.actions:
                text += " Answer in the Sparrow window."  # no buttons on this desktop
            if notice.actions:
                hints["resident"] = ("b", True)  # an answer button stays until answered
            body = (APP_NAME, replaces, self._icon, notice.title, text, actions, hints, -1)
            (ident,) = self._method("Notify", "susssasa{sv}i", body)
        except Exception as exc:
            log.warning("no desktop notification (%s: %s)", type(exc).__name__, exc)
            return None
        with self._lock:
            self._shown[notice.key] = int(ident)
            self._keys[int(ident)] = notice.key
        return int(ident)

    def close(self, key: str) -> bool:
        """Withdraw the notice shown under ``key``; False when none is shown."""
        with self._lock:
            ident = self._shown.pop(key, None)
            if ident is not None:
                self._keys.pop(ident, None)
        if ident is None:
            return False
        try:
            self._method("CloseNotification", "u", (ident,))
        except Exception as exc:  # closed on screen already, or the daemon is gone
            log.info("could not withdraw notice %s: %s", key, exc)
            return False
        return True

    def shown(self, key: str) -> int | None:
        with self._lock:
            return self._shown.get(key)

    # --- signals -------------------------------------------------------------

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                message = self._signals.get(timeout=1.0)
            except queue.Empty:
                continue
            try:
                self._dispatch(message)
            except Exception:
                log.exception("notifications: handling a signal failed")

    def _dispatch(self, message: Any) -> None:
        from jeepney import HeaderFields

        member = message.header.fields.get(HeaderFields.member)
        if member == "NameOwnerChanged":
            _name, _old, new = message.body
            with self._lock:
                # Another daemon (or none): its notices, ids and offers went with it.
                self._capabilities = None
                self._shown.clear()
                self._keys.clear()
            if self._on_daemon is not None:
                self._on_daemon(bool(new))
        elif member == "ActionInvoked":
            ident, action = int(message.body[0]), str(message.body[1])
            with self._lock:
                key = self._keys.get(ident)
            if key is not None and self._on_action is not None:
                self._on_action(key, action)
        elif member == "NotificationClosed":
            ident = int(message.body[0])
            with self._lock:
                key = self._keys.pop(ident, None)
                if key is not None and self._shown.get(key) == ident:
                    del self._shown[key]

    def _say_off(self) -> None:
        with self._lock:
            said, self._said_off = self._said_off, True
        if not said:
            log.warning(NO_SESSION_BUS)
