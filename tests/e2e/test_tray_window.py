"""Close-to-tray with the real ``sparrow-desktop`` under Xvfb and a real tray host
(Debian's ``trayer``, an XEmbed system tray: with it Qt's
``QSystemTrayIcon.isSystemTrayAvailable()`` is true and the icon is embedded).

Closing the window while a demo run goes on hides it: the process and the run
go on. "Open window" from the tray's menu (a right click on the icon, then the
menu's first item, pressed with the keyboard as a person could) shows the
window again, on the run, finished. "Quit" from the same menu ends the app.

The page is read through Chromium's DevTools protocol, which QtWebEngine opens
with ``QTWEBENGINE_REMOTE_DEBUGGING`` (on loopback): the test starts the run
from inside the window's page, as its own buttons would (same origin, the
page's cookie), and reads what it shows.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from bench.common import xvfb_display
from tests.conftest import require, require_program
from tests.e2e.desktop_fixtures import READY_TIMEOUT, Desktop
from tests.e2e.test_window import READY
from tests.e2e.x11 import close_windows_titled

pytestmark = pytest.mark.e2e

CONFIG = (
    '[autonomy]\nmode = "autonomous"\nlevel = 0.85\n'
    # Slow enough that the window can be closed while the demo still runs.
    "[demo]\nchunk_delay_seconds = 0.2\n"
)
FINAL_WORDS = "Replay this run any time with"


@pytest.fixture(scope="module")
def xvfb() -> Iterator[str]:
    """A private X server with a tray host on it; its display name."""
    require("Linux", sys.platform.startswith("linux"))
    trayer = require_program("trayer")
    require_program("xdotool")
    with xvfb_display(require_program("Xvfb")) as name:
        assert name, "Xvfb did not start"
        host = subprocess.Popen(
            [
                trayer,
                "--edge",
                "top",
                "--align",
                "left",
                "--widthtype",
                "request",
                "--height",
                "32",
                "--SetDockType",
                "false",
            ],
            env={**os.environ, "DISPLAY": name},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for(lambda: xdotool(name, "search", "--class", "trayer"), "the tray host")
            wait_for(lambda: qt_sees_a_tray(name), "Qt to see the system tray", timeout=60)
            yield name
        finally:
            host.terminate()
            host.wait(10)


def qt_sees_a_tray(display: str) -> bool:
    """QSystemTrayIcon.isSystemTrayAvailable() on ``display``, as the window asks it."""
    code = (
        "from PySide6.QtWidgets import QApplication, QSystemTrayIcon\n"
        "app = QApplication([])\n"
        "print(QSystemTrayIcon.isSystemTrayAvailable())\n"
    )
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    return done.stdout.strip() == "True"


def xdotool(display: str, *args: str) -> str:
    done = subprocess.run(
        ["xdotool", *args],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.stdout.strip() if done.returncode == 0 else ""


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.2)
    return value


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Page:
    """The window's page, through the DevTools protocol."""

    def __init__(self, port: int) -> None:
        self.port = port

    def _socket_url(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json", timeout=5) as answer:
            targets = json.loads(answer.read())
        pages = [t for t in targets if t.get("type") == "page"]
        assert pages, targets
        return str(pages[0]["webSocketDebuggerUrl"])

    def eval(self, expression: str) -> Any:
        with connect(self._socket_url(), open_timeout=10, max_size=None) as ws:
            ws.send(
                json.dumps(
                    {
                        "id": 1,
                        "method": "Runtime.evaluate",
                        "params": {
                            "expression": expression,
                            "awaitPromise": True,
                            "returnByValue": True,
                        },
                    }
                )
            )
            while True:
                reply = json.loads(ws.recv(timeout=30))
                if reply.get("id") == 1:
                    break
        result = reply["result"]
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def run(self, run_id: str) -> dict[str, Any]:
        value = self.eval(f"fetch('/api/runs/{run_id}').then(r => r.json())")
        assert isinstance(value, dict)
        return dict(value["run"])


def visible_windows(display: str) -> str:
    return xdotool(display, "search", "--onlyvisible", "--name", "^Sparrow$")


def tray_menu(display: str, key: str) -> None:
    """Right-click the tray icon (trayer's panel, top left), then a key in its menu."""
    panel = xdotool(display, "search", "--class", "trayer").split()[0]
    geometry = xdotool(display, "getwindowgeometry", "--shell", panel)
    values = dict(line.split("=", 1) for line in geometry.splitlines())
    x = int(values["X"]) + 12
    y = int(values["Y"]) + int(values["HEIGHT"]) // 2
    xdotool(display, "mousemove", str(x), str(y), "click", "3")
    time.sleep(1.0)  # the menu pops up and takes the keyboard
    xdotool(display, "key", key, "Return")


def test_closing_the_window_keeps_the_run_going_in_the_tray(
    launch_desktop: Callable[..., Desktop],
    xvfb: str,
    tmp_path: Path,
    workspace: Path,
    artifacts: Path,
) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(CONFIG)
    devtools = free_port()
    desktop = launch_desktop(
        SPARROW_HOME=str(home),
        QTWEBENGINE_REMOTE_DEBUGGING=f"127.0.0.1:{devtools}",
    )
    desktop.wait_for_line(READY, READY_TIMEOUT)
    page = Page(devtools)
    body = json.dumps({"workspace": str(workspace), "task": "show the demo", "model": "demo"})
    run_id = page.eval(
        f"fetch('/api/runs', {{method: 'POST', headers: {{'Content-Type': 'application/json'}},"
        f" body: {json.dumps(body)}}}).then(r => r.json()).then(d => d.run.id)"
    )
    assert isinstance(run_id, str)
    page.eval(f"location.hash = '#run={run_id}'")
    assert page.run(run_id)["status"] == "running"
    assert visible_windows(xvfb), "the window is not shown"

    # What a window manager sends when the user clicks the close button.
    assert close_windows_titled(xvfb, "Sparrow") >= 1
    wait_for(lambda: not visible_windows(xvfb), "the window to hide")
    time.sleep(1.0)
    assert desktop.process.poll() is None, desktop.stderr.read_text()[-4000:]
    assert page.run(run_id)["status"] == "running"  # the run goes on behind the tray
    kept = home / "state" / "desktop-notices.json"
    wait_for(lambda: kept.is_file() and "close-to-tray" in kept.read_text(), "the one-time notice")

    finished = wait_for(
        lambda: page.run(run_id)["status"] != "running", "the run to finish", timeout=180
    )
    assert finished is True
    assert page.run(run_id)["status"] == "completed"
    assert not visible_windows(xvfb)

    tray_menu(xvfb, "Down")  # the first item: Open window
    wait_for(lambda: visible_windows(xvfb), "the window to show again")
    assert page.eval("location.hash") == f"#run={run_id}"
    wait_for(
        lambda: FINAL_WORDS in str(page.eval("document.body.innerText")),
        "the finished run on the page",
    )

    time.sleep(1.5)  # the web view paints again once shown: a few frames
    from PIL import ImageGrab

    ImageGrab.grab(xdisplay=xvfb).save(artifacts / "tray-open-window.png")

    tray_menu(xvfb, "Up")  # the last item: Quit
    assert desktop.wait_exit() == 0, desktop.stderr.read_text()[-4000:]
    assert "no tray icon" not in desktop.stderr.read_text()


def test_with_close_to_tray_off_closing_stops_the_runs_and_quits(
    launch_desktop: Callable[..., Desktop], xvfb: str, tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(CONFIG + "[tray]\nclose_to_tray = false\n")
    devtools = free_port()
    desktop = launch_desktop(
        SPARROW_HOME=str(home), QTWEBENGINE_REMOTE_DEBUGGING=f"127.0.0.1:{devtools}"
    )
    desktop.wait_for_line(READY, READY_TIMEOUT)
    page = Page(devtools)
    body = json.dumps({"workspace": str(workspace), "task": "show the demo", "model": "demo"})
    run_id = page.eval(
        f"fetch('/api/runs', {{method: 'POST', headers: {{'Content-Type': 'application/json'}},"
        f" body: {json.dumps(body)}}}).then(r => r.json()).then(d => d.run.id)"
    )
    assert page.run(run_id)["status"] == "running"

    assert close_windows_titled(xvfb, "Sparrow") >= 1
    assert desktop.wait_exit() == 0, desktop.stderr.read_text()[-4000:]
    transcript = home / "state" / "transcripts" / f"{run_id}.jsonl"
    last = json.loads(transcript.read_text().splitlines()[-1])
    assert (last["type"], last["status"]) == ("run_finished", "cancelled")
