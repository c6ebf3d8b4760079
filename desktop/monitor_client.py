"""A client of the app's own WebSockets (``/ws/monitor`` by default; ``/ws`` for
the runs' events), for the desktop's tray and notifications.

It runs in a daemon thread: connects with the launch token (as the ``token``
query parameter, which the guard accepts on WebSockets) and the Origin the
window itself sends, hands each message, decoded, to ``on_message``, and
reconnects with backoff when the socket closes or the server is not up yet;
``hello`` messages are sent on every connection (a subscription, say).
:meth:`MonitorClient.stop` ends it (the window does when it closes).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from websockets.exceptions import WebSocketException
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], None]

FIRST_DELAY = 0.25
MAX_DELAY = 15.0
RECV_TIMEOUT = 1.0  # how often the reader looks at the stop flag


class MonitorClient:
    def __init__(
        self,
        port: int,
        token: str,
        on_message: Handler,
        *,
        on_connect: Callable[[], None] | None = None,
        on_disconnect: Callable[[], None] | None = None,
        host: str = "127.0.0.1",
        max_delay: float = MAX_DELAY,
        path: str = "/ws/monitor",
        hello: tuple[dict[str, Any], ...] = (),
        query: dict[str, str] | None = None,
    ) -> None:
        self.url = f"ws://{host}:{port}{path}?" + urlencode({"token": token, **(query or {})})
        self._hello = tuple(json.dumps(message) for message in hello)
        self.origin = Origin(f"http://{host}:{port}")
        self._on_message = on_message
        self._on_connect = on_connect
        self._on_disconnect = on_disconnect
        self._max_delay = max_delay
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._connection: ClientConnection | None = None
        self._thread: threading.Thread | None = None
        self.connections = 0  # how many times it connected (for tests and logs)

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("the monitor client is already started")
        self._thread = threading.Thread(target=self._run, name="monitor-client", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._lock:
            connection = self._connection
        if connection is not None:
            connection.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        delay = FIRST_DELAY
        while not self._stop.is_set():
            try:
                with connect(
                    self.url, origin=self.origin, open_timeout=5.0, close_timeout=1.0
                ) as connection:
                    delay = FIRST_DELAY
                    self._serve(connection)
            except (OSError, WebSocketException, TimeoutError) as exc:
                log.debug("monitor socket: no connection (%s); again in %.1f s", exc, delay)
            except Exception:  # never let the thread die: the tray would freeze
                log.exception("monitor socket: unexpected failure")
            if self._stop.wait(delay):
                break
            delay = min(delay * 2, self._max_delay)

    def _serve(self, connection: ClientConnection) -> None:
        with self._lock:
            if self._stop.is_set():
                connection.close()
                return
            self._connection = connection
        self.connections += 1
        for message in self._hello:
            connection.send(message)
        self._call(self._on_connect)
        try:
            while not self._stop.is_set():
                try:
                    text = connection.recv(timeout=RECV_TIMEOUT)
                except TimeoutError:
                    continue
                self._deliver(text)
        except (OSError, WebSocketException) as exc:
            if not self._stop.is_set():
                log.info("monitor socket closed: %s", exc)
        finally:
            with self._lock:
                self._connection = None
            connection.close()
            self._call(self._on_disconnect)

    def _deliver(self, text: str | bytes) -> None:
        try:
            message = json.loads(text)
        except ValueError:
            log.warning("monitor socket: a message that is not JSON was ignored")
            return
        if isinstance(message, dict):
            try:
                self._on_message(message)
            except Exception:
                log.exception("monitor socket: handling a message failed")

    @staticmethod
    def _call(callback: Callable[[], None] | None) -> None:
        if callback is None:
            return
        try:
            callback()
        except Exception:
            log.exception("monitor socket: a callback failed")
