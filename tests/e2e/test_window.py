"""The real ``sparrow-desktop`` window under a real Xvfb: it loads the UI, the page
reports through the JS bridge, the screenshot shows it, and closing the window
stops the server and exits 0."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.desktop.sockets import accepts, ports_of
from tests.e2e.desktop_fixtures import READY_TIMEOUT, Launcher
from tests.e2e.x11 import close_windows_titled

pytestmark = pytest.mark.e2e

READY = "Sparrow window ready"


def server_port(pid: int) -> int:
    listening = ports_of(pid)
    assert len(listening) == 1, listening
    ((host, port),) = listening
    assert host == "127.0.0.1"
    return port


def assert_shows_a_page(path: Path) -> None:
    from PIL import Image, ImageStat

    assert path.is_file(), "no screenshot was saved"
    with Image.open(path) as image:
        rgb = image.convert("RGB")
    width, height = rgb.size
    assert width >= 640 and height >= 400, rgb.size
    colours = rgb.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) >= 8, "the screenshot is nearly one colour"
    spread = ImageStat.Stat(rgb).stddev
    assert max(spread) > 8, f"the screenshot looks blank: stddev {spread}"


def test_window_loads_the_ui_and_closes_cleanly(
    launch_desktop: Launcher, artifacts: Path, xvfb: str
) -> None:
    screenshot = artifacts / "window.png"
    desktop = launch_desktop(screenshot=screenshot)
    # The page itself sends this line, through the JS bridge, once it has rendered.
    desktop.wait_for_line(READY, READY_TIMEOUT)
    port = server_port(desktop.process.pid)
    assert_shows_a_page(screenshot)

    # What a window manager sends when the user clicks the close button.
    assert close_windows_titled(xvfb, "Sparrow") >= 1, "no window titled Sparrow"
    assert desktop.wait_exit() == 0, desktop.stderr.read_text()[-4000:]
    assert not accepts(port)


def test_sigterm_closes_the_window_and_exits_0(launch_desktop: Launcher) -> None:
    desktop = launch_desktop()
    desktop.wait_for_line(READY, READY_TIMEOUT)
    port = server_port(desktop.process.pid)
    desktop.process.send_signal(signal.SIGTERM)
    assert desktop.wait_exit() == 0, desktop.stderr.read_text()[-4000:]
    assert not accepts(port)


def test_a_server_that_cannot_start_ends_the_desktop_with_1(
    launch_desktop: Launcher, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    # Settings read fine; the state folder cannot be made, so the server fails to start.
    (home / "state").write_text("the state folder cannot be made over a file")
    desktop = launch_desktop(SPARROW_HOME=str(home))
    assert desktop.wait_exit() == 1
    assert "server stopped before it was serving" in desktop.stderr.read_text()
