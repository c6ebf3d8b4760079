"""A TCP relay in front of the embedded server whose connections can be cut and
mended: the network between the desktop and its server dropping for a while.

The server's guard accepts only its own port in ``Host`` and ``Origin``, so the
relay writes the server's port where a client wrote the relay's (the headers
of a request or a WebSocket handshake; a client's WebSocket frames are masked,
so their bytes never match by chance).
"""

from __future__ import annotations

import contextlib
import socket
import threading


class Relay:
    def __init__(self, target_port: int) -> None:
        self._target = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._front = f"127.0.0.1:{self.port}".encode()
        self._back = f"127.0.0.1:{target_port}".encode()
        self._lock = threading.Lock()
        self._open = True
        self._sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, name="relay", daemon=True)
        self._thread.start()

    def cut(self) -> None:
        """Drop every connection; new ones are closed at once until :meth:`mend`."""
        with self._lock:
            self._open = False
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            self._close(sock)

    def mend(self) -> None:
        with self._lock:
            self._open = True

    def close(self) -> None:
        self.cut()
        self._close(self._listener)

    @staticmethod
    def _close(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if not self._open:
                    self._close(client)
                    continue
                try:
                    server = socket.create_connection(("127.0.0.1", self._target), timeout=10)
                except OSError:
                    self._close(client)
                    continue
                server.settimeout(None)
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, outward: bool) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data.replace(self._front, self._back) if outward else data)
        except OSError:
            pass
        finally:
            self._close(source)
            self._close(sink)
