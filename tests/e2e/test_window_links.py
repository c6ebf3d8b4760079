"""External links in the real window under Xvfb: a click on a link to another site
opens the system browser (here a script that records what it was asked to open)
and never navigates the window; a script's navigation elsewhere is refused.
The page is driven over the web view's own DevTools endpoint (tests/e2e/cdp.py)."""

from __future__ import annotations

import contextlib
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from tests.desktop.sockets import ports_of
from tests.e2e.cdp import PageSession
from tests.e2e.desktop_fixtures import EXIT_TIMEOUT, READY_TIMEOUT, Desktop, Launcher
from tests.e2e.test_window import READY

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(check: object, timeout: float = EXIT_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


class Window:
    def __init__(self, desktop: Desktop, page: PageSession, base: str, opened: Path) -> None:
        self.desktop, self.page, self.base, self.opened = desktop, page, base, opened

    def browser_was_asked(self) -> list[str]:
        return self.opened.read_text().split() if self.opened.exists() else []


@pytest.fixture
def window(launch_desktop: Launcher, tmp_path: Path) -> Iterator[Window]:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    # What `webbrowser` runs for the system browser when $BROWSER names it.
    browser.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    devtools = free_port()
    desktop = launch_desktop(
        BROWSER=str(browser), QTWEBENGINE_REMOTE_DEBUGGING=f"127.0.0.1:{devtools}"
    )
    desktop.wait_for_line(READY, READY_TIMEOUT)
    # The process listens on its server's port and on the DevTools one.
    (port,) = {port for _, port in ports_of(desktop.process.pid)} - {devtools}
    base = f"http://127.0.0.1:{port}"
    page = PageSession(devtools, base)
    try:
        yield Window(desktop, page, base, opened)
    finally:
        page.close()
        desktop.process.terminate()
        desktop.wait_exit()


def add_link(window: Window, href: str, *, blank: bool = False) -> None:
    target = ' target="_blank"' if blank else ""
    window.page.evaluate(
        "document.body.insertAdjacentHTML('afterbegin', "
        f'\'<a id="outside" href="{href}"{target} style="position:fixed;top:200px;'
        "left:200px;z-index:99;padding:20px;background:#fff\">outside</a>')"
    )


def test_a_link_to_another_site_opens_the_browser_not_the_window(window: Window) -> None:
    add_link(window, "https://example.com/docs")
    window.page.click("#outside")
    wait_for(lambda: window.browser_was_asked() == ["https://example.com/docs"])
    assert window.page.evaluate("location.origin") == window.base
    assert window.page.evaluate("document.getElementById('run-form') !== null")


def test_a_new_window_link_opens_the_browser_too(window: Window) -> None:
    add_link(window, "https://example.org/", blank=True)
    window.page.click("#outside")
    wait_for(lambda: window.browser_was_asked() == ["https://example.org/"])
    assert window.page.evaluate("location.origin") == window.base


def test_a_script_cannot_take_the_window_elsewhere(window: Window) -> None:
    window.page.evaluate("location.href = 'https://example.net/'")
    time.sleep(2)  # a navigation would have started by now; nothing to wait on otherwise
    assert window.page.evaluate("location.origin") == window.base
    # QtWebEngine reports a script's navigation as a link click (desktop/navigation.py):
    # it may go to the browser, one a second at most; never into the window.
    assert window.browser_was_asked() in ([], ["https://example.net/"])


def test_the_keys_run_the_app_commands_in_the_window(window: Window) -> None:
    page = window.page
    page.click("#workspace")
    page.press(",", "Comma", ctrl=True)
    wait_for(lambda: page.evaluate("location.hash") == "#settings")
    page.press("n", "KeyN", ctrl=True)
    wait_for(lambda: page.evaluate("document.activeElement.id") == "prompt")
    assert page.evaluate("location.hash") == ""
    # The window quits on the key's press: its DevTools link may close before the release.
    with contextlib.suppress(ConnectionClosed):
        page.press("q", "KeyQ", ctrl=True)
    assert window.desktop.wait_exit() == 0
