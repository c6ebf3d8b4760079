"""A few Chrome DevTools Protocol calls to the real window's web view.

QtWebEngine opens its DevTools endpoint when ``QTWEBENGINE_REMOTE_DEBUGGING``
is set. Playwright cannot attach to it (QtWebEngine has no browser contexts),
so the tests speak the protocol to the page's target directly: evaluate a
script, and click as a user does (real mouse events through ``Input``)."""

from __future__ import annotations

import json
import time
import urllib.request
from contextlib import ExitStack
from typing import Any

from websockets.sync.client import ClientConnection, connect


class PageSession:
    def __init__(self, port: int, url_prefix: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        target = None
        while target is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=5) as answer:
                    targets = json.load(answer)
                target = next((t for t in targets if t.get("url", "").startswith(url_prefix)), None)
            except OSError:
                pass
            if target is None:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no page at {url_prefix} on DevTools port {port}")
                time.sleep(0.2)
        self._stack = ExitStack()
        self._socket: ClientConnection = self._stack.enter_context(
            connect(target["webSocketDebuggerUrl"], max_size=None, open_timeout=30)
        )
        self._next = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        self._socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv(timeout=30))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real left click in the middle of the element ``selector`` matches."""
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def press(self, key: str, code: str, *, ctrl: bool = False) -> None:
        """A key press as the keyboard sends it (Ctrl as modifier 2)."""
        for kind in ("rawKeyDown", "keyUp"):
            self.call(
                "Input.dispatchKeyEvent",
                type=kind,
                key=key,
                code=code,
                modifiers=2 if ctrl else 0,
                windowsVirtualKeyCode=ord(key.upper()) if len(key) == 1 else 0,
            )

    def close(self) -> None:
        self._stack.close()
