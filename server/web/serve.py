"""The embedded server: the Starlette app on 127.0.0.1, served by uvicorn in a thread.

The desktop window (and ``sparrow-desktop --headless``) talk to this server over
loopback. It binds the literal ``127.0.0.1`` itself (never ``0.0.0.0``, never
``localhost``, which may resolve elsewhere), makes a per-launch token, and keeps
access logs off because request lines would carry that token.
"""

from __future__ import annotations

import errno
import importlib.util
import secrets
import socket
import sys
import threading

import uvicorn

from server.core.paths import Paths

LOOPBACK = "127.0.0.1"
# How long uvicorn waits for open connections and tasks before cancelling them.
GRACEFUL_SHUTDOWN_SECONDS = 5
BACKLOG = 128
_WINDOWS_ADDRESS_IN_USE = 10048  # WSAEADDRINUSE


class PortInUseError(OSError):
    """The requested port on 127.0.0.1 is taken by another program."""

    def __init__(self, port: int) -> None:
        self.port = port
        super().__init__(
            f"Port {port} on {LOOPBACK} is already in use (another Sparrow, or another "
            f"program, is listening there). Stop that program, pass another port with "
            f"--port, or omit --port to let Sparrow pick a free one."
        )


class ServerStartError(RuntimeError):
    """The server thread ended, or took too long, before it was serving."""


def _ws_implementation() -> str:
    """The uvicorn WebSocket protocol that works here without deprecation warnings."""
    if importlib.util.find_spec("websockets") is not None:
        return "websockets-sansio"
    if importlib.util.find_spec("wsproto") is not None:
        return "wsproto"
    raise ServerStartError(
        "Sparrow's WebSocket API needs the 'websockets' package: pip install websockets"
    )


def _bind_loopback(port: int) -> socket.socket:
    # IPPROTO_TCP spelled out: asyncio turns Nagle off (TCP_NODELAY) only on sockets
    # whose proto says TCP. With proto 0, every response on a kept-alive connection
    # (headers and body are two writes) stalls ~40 ms on the peer's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if sys.platform == "win32":
            # SO_REUSEADDR on Windows would let us steal a port another program holds.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
        else:
            # Rebind a port whose old connections linger in TIME_WAIT; a live listener
            # on the port still makes bind() fail.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((LOOPBACK, port))
    except OSError as exc:
        sock.close()
        in_use = exc.errno == errno.EADDRINUSE or (
            getattr(exc, "winerror", None) == _WINDOWS_ADDRESS_IN_USE
        )
        if in_use:
            raise PortInUseError(port) from exc
        raise
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server, telling when it serves (rather than being polled for it:
    a poll every 50 ms held back the serving line and the desktop's services)."""

    def __init__(self, config: uvicorn.Config, settled: threading.Event) -> None:
        super().__init__(config)
        self._settled = settled

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._settled.set()


class EmbeddedServer:
    """Serves ``server.web.app.create_app`` on 127.0.0.1 from a daemon thread."""

    def __init__(
        self, *, port: int = 0, token: str | None = None, paths: Paths | None = None
    ) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be between 0 and 65535, not {port}")
        self._requested_port = port
        self._port = port
        self._token = token if token is not None else secrets.token_urlsafe(32)
        self._paths = paths
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._stop_requested = False
        self._settled = threading.Event()  # serving, or the server thread has ended

    @property
    def port(self) -> int:
        return self._port

    @property
    def token(self) -> str:
        return self._token

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self._port}"

    @property
    def launch_url(self) -> str:
        """The URL that hands the token to a browser or window (it sets the cookie)."""
        return f"{self.base_url}/?token={self._token}"

    @property
    def running(self) -> bool:
        server, thread = self._server, self._thread
        return server is not None and server.started and thread is not None and thread.is_alive()

    def bind(self) -> None:
        """Bind and listen on 127.0.0.1 now (the port and URLs are known from here on).

        Connections made before :meth:`start` wait in the backlog. Raises
        :class:`PortInUseError` when the port is taken.
        """
        if self._socket is not None or self._thread is not None:
            return
        sock = _bind_loopback(self._requested_port)
        sock.listen(BACKLOG)
        self._socket = sock
        self._port = sock.getsockname()[1]

    def start(self, timeout: float = 30.0, *, wait: bool = True) -> None:
        """Serve the app from a background thread (binding first if :meth:`bind` was not called).

        With ``wait`` (the default) return once the app serves. Without it, return
        at once: connections queue until the app is up, so a window can start
        loading meanwhile; :meth:`wait_serving` tells whether it came up.
        """
        if self._thread is not None:
            raise RuntimeError("this EmbeddedServer was already started")
        ws = _ws_implementation()
        self.bind()
        sock = self._socket
        assert sock is not None
        self._thread = threading.Thread(
            target=self._serve, args=(sock, ws), name="sparrow-server", daemon=True
        )
        self._thread.start()
        if wait:
            self.wait_serving(timeout)

    def _serve(self, sock: socket.socket, ws: str) -> None:
        try:
            # Imported here, in the server thread: the app pulls in the engine, and
            # a window can get going meanwhile.
            from server.web.app import create_app

            app = create_app(token=self._token, port=self._port, paths=self._paths)
            config = uvicorn.Config(
                app,
                log_config=None,
                access_log=False,  # request lines would carry the token
                proxy_headers=False,
                server_header=False,
                lifespan="on",
                ws=ws,
                # Loopback: compressing each message costs CPU and saves nothing.
                ws_per_message_deflate=False,
                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
            )
            server = _Server(config, self._settled)
            with self._lock:
                if self._stop_requested:
                    return
                self._server = server
            server.run(sockets=[sock])
        except BaseException as exc:  # SystemExit too: uvicorn exits on startup failure
            self._error = exc
        finally:
            self._settled.set()

    def wait_serving(self, timeout: float = 30.0) -> None:
        """Return once the app serves; raise ServerStartError if it never will.

        May be called before :meth:`start` (from another thread): it waits for it.
        """
        if not self._settled.wait(timeout):
            raise ServerStartError(f"Sparrow's server was not serving after {timeout:g} s")
        if not self.running:
            thread = self._thread
            if thread is not None:
                thread.join(1.0)  # it has ended, or is ending: its error is set
            self._close_socket()
            cause = self._error
            detail = f": {cause!r}" if cause is not None else ""
            raise ServerStartError(
                f"Sparrow's server stopped before it was serving{detail} (see the errors above)"
            ) from cause

    def stop(self, timeout: float = 10.0) -> None:
        """Shut down: the app's lifespan stops the runs; then the thread ends.

        Raises ``TimeoutError`` if the server thread is still alive after
        ``timeout`` seconds and a forced exit.
        """
        with self._lock:
            self._stop_requested = True
            server, thread = self._server, self._thread
        if thread is None:
            self._close_socket()
            return
        if server is not None:
            server.should_exit = True
        thread.join(timeout)
        server = self._server
        if thread.is_alive() and server is not None:
            server.force_exit = True
            thread.join(2.0)
        self._close_socket()
        if thread.is_alive():
            raise TimeoutError(f"Sparrow's server did not stop within {timeout:g} s")

    def _close_socket(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def __enter__(self) -> EmbeddedServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
