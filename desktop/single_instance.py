"""One Sparrow window per user: a second launch hands its arguments to the first.

The first launch holds an exclusive ``flock`` on a lock file for as long as it
lives and listens on a unix socket beside it. A later launch that cannot take
the lock connects, sends its request (one JSON line) and exits once the first
one answers. The kernel drops the lock of a process that dies, however it
dies: a crashed first instance leaves a socket file behind, and the next
launch takes the lock, removes that socket and becomes the first itself.

Both files live in the user's runtime folder (``$XDG_RUNTIME_DIR``, else a
``sparrow-UID`` folder of the temporary folder, made private), named after the
state folder: another user, or another ``SPARROW_HOME``, is another instance.
Without unix sockets or ``flock`` (Windows) every launch is a first one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024
# How long a second launch waits for the first to answer (it may be starting up).
HANDOVER_TIMEOUT = 15.0
ACK = b"ok\n"


class InstanceError(OSError):
    """The runtime folder cannot be used safely (another user's, or open to others)."""


@dataclass(frozen=True)
class Request:
    """What a later launch asks of the first: the folder to open, if any."""

    folder: str | None = None

    def encode(self) -> bytes:
        return json.dumps({"folder": self.folder}).encode() + b"\n"

    @staticmethod
    def decode(data: bytes) -> Request:
        value = json.loads(data.decode("utf-8"))
        if not isinstance(value, dict):
            raise ValueError("not a JSON object")
        folder = value.get("folder")
        if folder is not None and not isinstance(folder, str):
            raise ValueError("'folder' must be a string")
        return Request(folder=folder)


def runtime_folder(env: dict[str, str] | None = None) -> Path:
    """A folder only this user can enter, for the socket and the lock."""
    env = dict(os.environ) if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and Path(runtime).is_dir():
        folder = Path(runtime) / "sparrow"
    else:
        folder = Path(tempfile.gettempdir()) / f"sparrow-{os.getuid()}"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise InstanceError(f"{folder} is not a folder of this user's")
    if info.st_mode & 0o077:
        raise InstanceError(f"{folder} is open to other users (mode {info.st_mode & 0o777:o})")
    return folder


def address_for(state: Path, folder: Path) -> Path:
    """The socket of the instance whose state folder is ``state``."""
    key = hashlib.sha256(os.fsencode(str(state.resolve()))).hexdigest()[:16]
    return folder / f"desktop-{key}.sock"


def supported() -> bool:
    return hasattr(socket, "AF_UNIX") and hasattr(os, "getuid")


class Primary:
    """The first instance: holds the lock and serves the socket until closed."""

    def __init__(self, address: Path, lock_fd: int) -> None:
        self.address = address
        self._lock_fd = lock_fd
        self._server: socket.socket | None = None
        self._handler: Callable[[Request], None] | None = None
        self._pending: list[Request] = []
        self._guard = threading.Lock()

    def listen(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.address.unlink()  # a crashed first instance's: the lock says it is dead
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(self.address))
        server.listen(8)
        self._server = server
        threading.Thread(target=self._serve, name="single-instance", daemon=True).start()

    def on_request(self, handler: Callable[[Request], None]) -> None:
        """Hand requests to ``handler`` from now on (those that came before, too)."""
        with self._guard:
            self._handler = handler
            pending, self._pending = self._pending, []
        for request in pending:
            handler(request)

    def _serve(self) -> None:
        server = self._server
        while server is not None:
            try:
                connection, _ = server.accept()
            except OSError:
                return  # closed
            with connection:
                connection.settimeout(5.0)
                try:
                    request = Request.decode(_read_line(connection))
                except (OSError, ValueError) as exc:
                    log.warning("ignored a malformed request from another launch: %s", exc)
                    continue
                self._deliver(request)
                with contextlib.suppress(OSError):
                    connection.sendall(ACK)

    def _deliver(self, request: Request) -> None:
        with self._guard:
            handler = self._handler
            if handler is None:
                self._pending.append(request)
                return
        try:
            handler(request)
        except Exception:
            log.exception("could not act on another launch's request")

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            with contextlib.suppress(OSError):
                server.shutdown(socket.SHUT_RDWR)
            server.close()
            with contextlib.suppress(OSError):
                self.address.unlink()
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = -1


def _read_line(connection: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = connection.recv(4096)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_MESSAGE_BYTES:
            raise ValueError("the request is too long")
    return data


def claim(address: Path) -> Primary | None:
    """Become the first instance (a listening Primary), or None when one runs."""
    import fcntl

    lock_fd = os.open(f"{address}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock_fd)
        return None
    except BaseException:
        os.close(lock_fd)
        raise
    primary = Primary(address, lock_fd)
    try:
        primary.listen()
    except BaseException:
        primary.close()
        raise
    return primary


def hand_over(address: Path, request: Request, timeout: float = HANDOVER_TIMEOUT) -> bool:
    """Send ``request`` to the first instance; whether it took it.

    The first instance holds the lock from before it listens: connection
    refusals are retried until ``timeout`` (it may be starting up).
    """
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(max(0.1, deadline - time.monotonic()))
                sock.connect(str(address))
                sock.sendall(request.encode())
                return sock.recv(len(ACK)) == ACK
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() + delay > deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
        except OSError:
            return False
