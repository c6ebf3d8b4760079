"""The window's life with the real ``sparrow-desktop`` under a real Xvfb: one
window per user (a second launch hands its folder to the first and exits), a
crashed first one does not block the next launch, a folder given at launch
opens in the window, and the window's size and place come back at the next
launch, clamped to the screen."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from desktop.main import HANDED_OVER_LINE
from desktop.window import OPENED_LINE
from tests.desktop.sockets import ports_of
from tests.e2e.desktop_fixtures import EXIT_TIMEOUT, READY_TIMEOUT, Launcher
from tests.e2e.test_window import READY
from tests.e2e.x11 import close_windows_titled, geometry_of, move_resize, shown_windows_titled

pytestmark = pytest.mark.e2e

SCREEN = (1280, 800)  # the private Xvfb's


def test_a_second_launch_hands_its_folder_to_the_first_and_exits(
    launch_desktop: Launcher, xvfb: str, tmp_path: Path
) -> None:
    first = launch_desktop()
    first.wait_for_line(READY, READY_TIMEOUT)
    folder = tmp_path / "project"
    folder.mkdir()

    second = launch_desktop(argv=[str(folder)])
    assert second.wait_exit() == 0, second.stderr.read_text()[-4000:]
    second.wait_for_line(f"{HANDED_OVER_LINE} (to open {folder})", EXIT_TIMEOUT)
    assert "Qt" not in second.stderr.read_text()  # it never started a window of its own

    # The first window's page now holds the folder in its new conversation's workspace.
    first.wait_for_line(OPENED_LINE.format(folder=folder), READY_TIMEOUT)
    assert shown_windows_titled(xvfb, "Sparrow") == 1
    assert first.process.poll() is None

    # A launch with no folder only brings the window to the front.
    third = launch_desktop()
    assert third.wait_exit() == 0, third.stderr.read_text()[-4000:]
    third.wait_for_line(HANDED_OVER_LINE, EXIT_TIMEOUT)
    assert close_windows_titled(xvfb, "Sparrow") >= 1
    assert first.wait_exit() == 0


def test_a_crashed_first_window_does_not_block_the_next_launch(
    launch_desktop: Launcher, tmp_path: Path
) -> None:
    crashed = launch_desktop()
    crashed.wait_for_line(READY, READY_TIMEOUT)
    crashed.process.send_signal(signal.SIGKILL)  # no clean-up: its socket file stays
    crashed.process.wait(EXIT_TIMEOUT)
    runtime = Path(crashed.env["XDG_RUNTIME_DIR"]) / "sparrow"
    assert list(runtime.glob("desktop-*.sock")), "the crash should have left its socket"

    folder = tmp_path / "after-the-crash"
    folder.mkdir()
    next_one = launch_desktop(argv=[str(folder)])
    next_one.wait_for_line(READY, READY_TIMEOUT)
    next_one.wait_for_line(OPENED_LINE.format(folder=folder), READY_TIMEOUT)
    assert ports_of(next_one.process.pid), "the next launch serves its own window"
    next_one.process.send_signal(signal.SIGTERM)
    assert next_one.wait_exit() == 0


def test_a_folder_that_is_not_one_is_refused_in_one_line(
    launch_desktop: Launcher, tmp_path: Path
) -> None:
    missing = launch_desktop(argv=[str(tmp_path / "nowhere")])
    assert missing.wait_exit() == 2
    assert missing.stderr.read_text().strip() == (
        f"Sparrow cannot open {tmp_path / 'nowhere'}: it does not exist"
    )


def test_size_and_place_come_back_at_the_next_launch(
    launch_desktop: Launcher, xvfb: str, tmp_path: Path
) -> None:
    state = tmp_path / "home" / "state"
    state.mkdir(parents=True)
    (state / "window.json").write_text(
        json.dumps({"x": 60, "y": 50, "width": 900, "height": 600, "maximized": False})
    )
    desktop = launch_desktop()
    desktop.wait_for_line(READY, READY_TIMEOUT)
    assert geometry_of(xvfb, "Sparrow") == (60, 50, 900, 600)

    # Moved and resized as a window manager would, then closed: remembered.
    move_resize(xvfb, "Sparrow", 200, 120, 1000, 640)
    desktop.wait_until(lambda: geometry_of(xvfb, "Sparrow") == (200, 120, 1000, 640))
    assert close_windows_titled(xvfb, "Sparrow") >= 1
    assert desktop.wait_exit() == 0
    saved = json.loads((state / "window.json").read_text())
    assert saved == {"x": 200, "y": 120, "width": 1000, "height": 640, "maximized": False}

    again = launch_desktop()
    again.wait_for_line(READY, READY_TIMEOUT)
    assert geometry_of(xvfb, "Sparrow") == (200, 120, 1000, 640)
    assert close_windows_titled(xvfb, "Sparrow") >= 1
    assert again.wait_exit() == 0


def test_a_place_off_the_screen_is_brought_back_onto_it(
    launch_desktop: Launcher, xvfb: str, tmp_path: Path
) -> None:
    state = tmp_path / "home" / "state"
    state.mkdir(parents=True)
    # Saved on a second monitor since unplugged, and larger than this screen.
    (state / "window.json").write_text(
        json.dumps({"x": 3000, "y": 900, "width": 1600, "height": 700, "maximized": False})
    )
    desktop = launch_desktop()
    desktop.wait_for_line(READY, READY_TIMEOUT)
    x, y, width, height = geometry_of(xvfb, "Sparrow")
    assert (width, height) == (SCREEN[0], 700)
    assert x >= 0 and x + width <= SCREEN[0] and y >= 0 and y + height <= SCREEN[1]
    assert close_windows_titled(xvfb, "Sparrow") >= 1
    assert desktop.wait_exit() == 0
