"""Keep the window on Sparrow's own server.

pywebview injects ``window.pywebview`` (and with it the js_api bridge) into
every page the window loads, so a foreign page in the window could call the
bridge. The rule: the window's main frame may only show pages of the embedded
server's origin; a link the user clicks to an http(s) or mailto URL opens in the
system browser; anything else is refused.

Where it is enforced:
- Qt (Linux): :func:`install_qt_guard` gives the page class of pywebview's Qt
  backend an ``acceptNavigationRequest`` that applies :func:`verdict`, and
  routes new-window requests (``target=_blank``, ``window.open``) through the
  same rule. A refused navigation makes Qt report a failed load, on which
  pywebview injects its bridge again and fires ``pywebviewready`` once more:
  page code should listen for that event with ``{once: true}``.
- Cocoa / EdgeChromium (macOS / Windows): pywebview opens ``target=_blank`` links
  in the browser, but in-page navigations are not yet filtered there; the UI's
  Content-Security-Policy and its use of ``Bridge.open_external`` for outside
  links are the guard until a native hook is added.
"""

from __future__ import annotations

import logging
import threading
import time
import webbrowser
from enum import Enum
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

EXTERNAL_SCHEMES = frozenset({"http", "https", "mailto"})


class Verdict(Enum):
    ALLOW = "allow"  # load it in the window
    EXTERNAL = "external"  # hand it to the system browser instead
    BLOCK = "block"  # refuse it


def _origin(url: str) -> tuple[str, str, int | None] | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def is_external_url(url: str) -> bool:
    """An URL that may be handed to the system browser."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if parts.scheme.lower() == "mailto":
        return bool(parts.path)
    return parts.scheme.lower() in EXTERNAL_SCHEMES and bool(parts.hostname)


def verdict(url: str, own_origin: str, *, user_clicked: bool, main_frame: bool = True) -> Verdict:
    """What the window does with a navigation to ``url``.

    ``own_origin`` is the embedded server's base URL (``http://127.0.0.1:PORT``).
    """
    if url == "about:blank":
        return Verdict.ALLOW
    target = _origin(url)
    if target is not None and target == _origin(own_origin):
        return Verdict.ALLOW
    if user_clicked and main_frame and is_external_url(url):
        return Verdict.EXTERNAL
    return Verdict.BLOCK


class _Throttle:
    """At most one external open per interval: a page cannot flood the browser with tabs."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._last = -interval

    def allow(self) -> bool:
        with self._lock:
            now = time.monotonic()
            if now - self._last < self.interval:
                return False
            self._last = now
            return True


_throttle = _Throttle(1.0)


def open_external(url: str) -> bool:
    """Open ``url`` in the system browser if it is an http(s) or mailto URL.

    Script-driven navigations count as link clicks in QtWebEngine (Chromium gives
    them a "link" transition), so a page could try to open many; one a second opens.
    """
    if not is_external_url(url):
        log.warning("refused to open %r outside the window", url)
        return False
    if not _throttle.allow():
        log.warning("refused to open %r: too soon after the last one", url)
        return False
    return webbrowser.open(url, new=2, autoraise=True)


def install_qt_guard(own_origin: str) -> None:
    """Make pywebview's Qt backend apply :func:`verdict` to every navigation.

    Call after :func:`desktop.qt_env.configure_backend` and before
    ``webview.start()``: pywebview builds its page from ``BrowserView.WebPage``
    when it creates the window, so the override must be in place before that.
    """
    from PySide6.QtWebEngineCore import QWebEnginePage
    from webview.platforms.qt import BrowserView

    link_clicked = QWebEnginePage.NavigationType.NavigationTypeLinkClicked

    def decide(url: Any, nav_type: Any, is_main_frame: bool) -> bool:
        text = url.toString()
        result = verdict(
            text, own_origin, user_clicked=nav_type == link_clicked, main_frame=is_main_frame
        )
        if result is Verdict.EXTERNAL:
            open_external(text)
        elif result is Verdict.BLOCK:
            log.warning("blocked navigation of the window to %r", text)
        return result is Verdict.ALLOW

    def guarded_accept(page: Any, url: Any, nav_type: Any, is_main_frame: bool) -> bool:
        return decide(url, nav_type, is_main_frame)

    def new_window_accept(page: Any, url: Any, nav_type: Any, is_main_frame: bool) -> bool:
        # target=_blank and window.open land here: never a second window.
        text = url.toString()
        if is_external_url(text) and _origin(text) != _origin(own_origin):
            open_external(text)
        else:
            log.warning("blocked a new window for %r", text)
        return False

    # Patched onto pywebview's classes rather than subclassed: its Qt backend calls
    # super(BrowserView.WebPage, self), which a replaced class attribute would break.
    # PySide looks Python overrides of C++ virtuals up on the class when a page is
    # made, so this must happen before webview.start() creates the window.
    setattr(BrowserView.WebPage, "acceptNavigationRequest", guarded_accept)  # noqa: B010
    setattr(BrowserView.NavigationHandler, "acceptNavigationRequest", new_window_accept)  # noqa: B010
