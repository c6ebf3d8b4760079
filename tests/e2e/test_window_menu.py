"""The app menu of the real window under Xvfb, used as a person does: a click on
"Sparrow" in the menu bar, arrows and Enter (real X input, XTEST). Settings
opens the Settings view, New conversation the task field, Quit ends the app."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.desktop.sockets import ports_of
from tests.e2e.cdp import PageSession
from tests.e2e.desktop_fixtures import READY_TIMEOUT, Desktop, Launcher
from tests.e2e.test_window import READY
from tests.e2e.test_window_links import free_port, wait_for
from tests.e2e.x11 import click_at, press_keys

pytestmark = pytest.mark.e2e

# The menu bar's "Sparrow" title, in a window placed at the screen's corner.
MENU_TITLE_AT = (24, 9)


@pytest.fixture
def window(launch_desktop: Launcher, tmp_path: Path) -> Iterator[tuple[Desktop, PageSession]]:
    state = tmp_path / "home" / "state"
    state.mkdir(parents=True)
    place = {"x": 0, "y": 0, "width": 1000, "height": 700, "maximized": False}
    (state / "window.json").write_text(json.dumps(place))
    devtools = free_port()
    desktop = launch_desktop(QTWEBENGINE_REMOTE_DEBUGGING=f"127.0.0.1:{devtools}")
    desktop.wait_for_line(READY, READY_TIMEOUT)
    (port,) = {port for _, port in ports_of(desktop.process.pid)} - {devtools}
    page = PageSession(devtools, f"http://127.0.0.1:{port}")
    try:
        yield desktop, page
    finally:
        page.close()
        desktop.process.terminate()
        desktop.wait_exit()


def choose(xvfb: str, downs: int) -> None:
    """Open the app menu and choose its ``downs``-th item."""
    click_at(xvfb, *MENU_TITLE_AT)
    press_keys(xvfb, *["Down"] * downs, "Return")


def test_the_menu_runs_the_commands(window: tuple[Desktop, PageSession], xvfb: str) -> None:
    desktop, page = window
    choose(xvfb, 3)  # New conversation, Open workspace…, Settings
    wait_for(lambda: page.evaluate("location.hash") == "#settings")
    choose(xvfb, 1)
    wait_for(lambda: page.evaluate("location.hash") == "")
    wait_for(lambda: page.evaluate("document.activeElement.id") == "prompt")
    choose(xvfb, 4)  # the separator is passed over: Quit
    assert desktop.wait_exit() == 0
