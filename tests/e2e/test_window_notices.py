"""No system notice for the run the user has in front of them, through the real
``sparrow-desktop`` window under Xvfb: the page tells the desktop its address
(ui/js/bridge.js -> Bridge.page_shows), Qt tells it the window is shown and
focused (desktop.qt_gui.WindowWatch), and a notification daemon on the test's
D-Bus session bus (tests/desktop/notification_daemon.py) reads what is sent.

Two demo runs end, one after the other, while the window has the focus and its
page is on the first: the second's end is notified, the first's is not.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import require, require_program
from tests.desktop.notification_daemon import NotificationDaemon
from tests.e2e.desktop_fixtures import READY_TIMEOUT, Desktop
from tests.e2e.test_tray_window import Page, free_port, wait_for, xdotool
from tests.e2e.test_window import READY

pytestmark = pytest.mark.e2e

CONFIG = '[autonomy]\nmode = "autonomous"\nlevel = 0.85\n[demo]\nchunk_delay_seconds = 0.02\n'


def start_demo(page: Page, workspace: Path, task: str) -> str:
    body = json.dumps({"workspace": str(workspace), "task": task, "model": "demo"})
    run_id = page.eval(
        f"fetch('/api/runs', {{method: 'POST', headers: {{'Content-Type': 'application/json'}},"
        f" body: {json.dumps(body)}}}).then(r => r.json()).then(d => d.run.id)"
    )
    assert isinstance(run_id, str)
    return run_id


def test_the_end_of_the_run_in_front_is_not_notified_another_is(
    launch_desktop: Callable[..., Desktop], xvfb: str, tmp_path: Path, workspace: Path
) -> None:
    bus = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "")
    require("a D-Bus session bus (scripts/test-session.sh)", bool(bus))
    require_program("xdotool")
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(CONFIG)
    daemon = NotificationDaemon(bus).start()
    try:
        devtools = free_port()
        desktop = launch_desktop(
            SPARROW_HOME=str(home), QTWEBENGINE_REMOTE_DEBUGGING=f"127.0.0.1:{devtools}"
        )
        desktop.wait_for_line(READY, READY_TIMEOUT)
        page = Page(devtools)
        # No window manager on Xvfb: give the window the input focus as one would.
        window = wait_for(lambda: xdotool(xvfb, "search", "--name", "^Sparrow$"), "the window")
        xdotool(xvfb, "windowfocus", window.split()[0])

        first = start_demo(page, workspace, "the one in front")
        page.eval(f"location.hash = '#run={first}'")
        wait_for(lambda: page.run(first)["status"] == "completed", "the first run to end")
        start_demo(page, workspace, "the one behind")
        wait_for(lambda: daemon.find("Run finished: the one behind"), "the other run's notice")
        assert page.eval("location.hash") == f"#run={first}"
        # The first run's end came before the second started: had it been sent, it
        # would be there already.
        assert [n.title for n in daemon.notices if n.title.startswith("Run ")] == [
            "Run finished: the one behind"
        ]
        desktop.process.terminate()
        assert desktop.wait_exit() == 0, desktop.stderr.read_text()[-4000:]
    finally:
        daemon.stop()
