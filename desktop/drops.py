"""Files dropped on the window, with their real paths.

The page's own ``drop`` event carries only names and bytes. pywebview's DOM
event handler, bound in Python, gets each dropped file's real path
(``pywebviewFullPath``, filled in from what the GUI toolkit saw dropped);
the paths exist only on this side, so they are handed to the page, which
asks the server how each will be sent and shows the chips. The handler must
be bound again after every full page load (pywebview binds it in the page).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)

# What the page exposes for them (ui/js/main.js).
PAGE_HOOK = "sparrowDropped"


def dropped_paths(event: Mapping[str, Any]) -> list[str]:
    """The real paths of the files of a DOM drop event, as pywebview gives it;
    files it could not match to a path (dragged from another web page) are
    left out."""
    transfer = event.get("dataTransfer") or {}
    files = (transfer.get("files") or []) if isinstance(transfer, Mapping) else []
    paths = []
    for item in files:
        path = item.get("pywebviewFullPath") if isinstance(item, Mapping) else None
        if isinstance(path, str) and path and path not in paths:
            paths.append(path)
    return paths


def page_call(paths: list[str]) -> str:
    """The script that hands ``paths`` to the page (JSON: no quoting tricks)."""
    return f"window.{PAGE_HOOK} && window.{PAGE_HOOK}({json.dumps(paths)})"


class DropHandler:
    """Bound to the window's document; ``deliver`` runs the page call
    (``window.evaluate_js``)."""

    def __init__(self, deliver: Callable[[str], object]) -> None:
        self._deliver = deliver

    def __call__(self, event: Mapping[str, Any]) -> None:
        paths = dropped_paths(event)
        if not paths:
            return
        try:
            self._deliver(page_call(paths))
        except Exception as exc:  # the window may be closing: the drop is lost, not the app
            log.warning("dropped files not handed to the page: %s", exc)


def bind_drops(window: Any) -> None:
    """Listen for drops on the window's page (call after each page load)."""
    from webview.dom import DOMEventHandler

    handler = DropHandler(window.evaluate_js)
    # prevent_default: the web view must not open the file in place of the app.
    window.dom.document.events.drop += DOMEventHandler(handler, True, True)


BIND_ATTEMPTS = 5
BIND_PAUSE = 0.3  # seconds between two attempts


def start_binding(
    window: Any,
    bind: Callable[[Any], None] = bind_drops,
    *,
    attempts: int = BIND_ATTEMPTS,
    pause: float = BIND_PAUSE,
) -> threading.Thread:
    """Bind the drop handler in a daemon thread of its own, trying again a few times.

    Binding asks the page (pywebview's ``evaluate_js``), which waits for an
    answer without a time limit: on a window closed meanwhile it waits forever,
    and in pywebview's own event thread (not a daemon) that kept the app from
    exiting. And a page still settling can answer without its ``drop`` event, so
    one attempt sometimes left drops unbound."""

    def run() -> None:
        for attempt in range(1, attempts + 1):
            try:
                bind(window)
                return
            except Exception as exc:  # drops are a convenience: the window works without
                if attempt == attempts:
                    log.warning("dropped files will not attach: %s", exc)
                    return
            time.sleep(pause)

    thread = threading.Thread(target=run, name="bind-drops", daemon=True)
    thread.start()
    return thread
