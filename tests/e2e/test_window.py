"""The real ``sparrow-desktop`` window under a real Xvfb: it loads the UI, the page
reports through the JS bridge, the screenshot shows it, and closing the window
stops the server and exits 0."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.common import xvfb_display
from tests.conftest import require, require_program
from tests.desktop.sockets import accepts, ports_of
from tests.e2e.x11 import close_windows_titled

pytestmark = pytest.mark.e2e

READY = "Sparrow window ready"
# Guards against a hang, not timing goals (those are in bench/).
READY_TIMEOUT = 90.0
EXIT_TIMEOUT = 30.0


@pytest.fixture(scope="module")
def xvfb() -> Iterator[str]:
    """A private X server; its display name (``-displayfd`` picks a free number)."""
    require("Linux", sys.platform.startswith("linux"))
    with xvfb_display(require_program("Xvfb")) as name:
        assert name, "Xvfb did not start"
        yield name


@dataclass
class Desktop:
    process: subprocess.Popen[str]
    lines: queue.Queue[str]
    stderr: Path

    def wait_for_line(self, wanted: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        seen = []
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            seen.append(line)
            if line == wanted:
                return
        pytest.fail(
            f"no {wanted!r} line (exit code {self.process.poll()}); stdout: {seen}; "
            f"stderr: {self.stderr.read_text()[-4000:]}"
        )

    def wait_exit(self) -> int:
        try:
            return self.process.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            pytest.fail(f"the desktop did not exit; stderr: {self.stderr.read_text()[-4000:]}")


Launcher = Callable[..., Desktop]


@pytest.fixture
def launch_desktop(xvfb: str, tmp_path: Path) -> Iterator[Launcher]:
    """Starts the real ``sparrow-desktop`` console script on the private display."""
    script = Path(sys.executable).with_name("sparrow-desktop")
    require("the sparrow-desktop console script (pip install -e .)", script.exists())
    started: list[tuple[subprocess.Popen[str], threading.Thread]] = []

    def launch(screenshot: Path | None = None, **overrides: str) -> Desktop:
        env = {**os.environ, "DISPLAY": xvfb, "SPARROW_HOME": str(tmp_path / "home"), **overrides}
        env.pop("WAYLAND_DISPLAY", None)
        env.pop("SPARROW_SCREENSHOT", None)
        if screenshot is not None:
            screenshot.unlink(missing_ok=True)
            env["SPARROW_SCREENSHOT"] = str(screenshot)
        stderr = tmp_path / f"desktop-{len(started)}.stderr"
        with stderr.open("w") as err:
            process = subprocess.Popen(
                [str(script)], stdout=subprocess.PIPE, stderr=err, text=True, env=env
            )
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line.rstrip("\n"))

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        started.append((process, reader))
        return Desktop(process, lines, stderr)

    yield launch
    for process, reader in started:
        if process.poll() is None:
            process.kill()
        process.wait()
        reader.join(10)
        assert process.stdout is not None
        process.stdout.close()


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
