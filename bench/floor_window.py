"""The floor for the window benchmark: the least a pywebview window on a local
server can be. A bare Starlette app (one one-line page) served by uvicorn in a
thread on 127.0.0.1, shown in a bare pywebview window on the same backend.

Prints ``floor window ready`` when the page reports through its js_api that it
has loaded, then runs until the window is closed or SIGTERM/SIGINT closes it.
The caller sets the backend environment (QT_API, PYWEBVIEW_GUI, Chromium flags).
"""

from __future__ import annotations

import signal
import socket
import sys
import threading
import time
from types import FrameType

import uvicorn
import webview
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

READY = "floor window ready"
PAGE = (
    "<!doctype html><title>Floor</title><p>Hello from the floor.</p>"
    "<script>window.addEventListener('pywebviewready', () => requestAnimationFrame("
    "() => window.pywebview.api.loaded()));</script>"
)


async def page(request: Request) -> HTMLResponse:
    return HTMLResponse(PAGE)


class Api:
    def __init__(self) -> None:
        self._said = False

    def loaded(self) -> None:
        if not self._said:
            self._said = True
            print(READY, flush=True)


def main() -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = Starlette(routes=[Route("/", page)])
    config = uvicorn.Config(
        app, log_config=None, access_log=False, proxy_headers=False, lifespan="off", ws="none"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.002)

    window = webview.create_window(
        "Floor", f"http://127.0.0.1:{port}/", js_api=Api(), width=1200, height=760
    )
    assert window is not None

    def close(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=window.destroy).start()

    signal.signal(signal.SIGTERM, close)
    webview.start(private_mode=True)
    server.should_exit = True
    thread.join(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
