"""The real window at 800x600 and 1400x900 (its remembered geometry), a long
conversation open: nothing spills out, the conversation gets most of the
height. The web view's own pixels are saved in artifacts/ to be looked at."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.common import xvfb_display
from tests.conftest import require_program
from tests.desktop.sockets import ports_of
from tests.e2e.cdp import PageSession
from tests.e2e.desktop_fixtures import READY_TIMEOUT, Launcher
from tests.e2e.test_layout import long_turns
from tests.e2e.test_window import READY
from tests.e2e.test_window_links import free_port, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def xvfb() -> Iterator[str]:
    """A screen big enough for the larger window (the shared one is 1280x800)."""
    with xvfb_display(require_program("Xvfb"), screen="1600x1000x24") as name:
        assert name, "Xvfb did not start"
        yield name


def start_long_conversation(page: PageSession, workspace: Path) -> None:
    body = {"workspace": str(workspace), "task": "Read the notes, many times over.",
            "model": "script", "script": {"turns": long_turns()}}  # fmt: skip
    run_id = page.evaluate(
        "fetch('/api/runs', {method: 'POST', headers: {'Content-Type': 'application/json'}, "
        f"body: JSON.stringify({json.dumps(body)})}}).then(r => r.json()).then(d => d.run.id)"
    )
    page.evaluate(f"location.hash = '#run=' + {json.dumps(run_id)}")
    wait_for(lambda: page.evaluate("document.querySelector('[data-testid=run-end]') !== null"))


@pytest.mark.parametrize(("width", "height"), [(800, 600), (1400, 900)])
def test_the_window_gives_the_conversation_most_of_the_height(
    launch_desktop: Launcher,
    tmp_path: Path,
    workspace: Path,
    artifacts: Path,
    width: int,
    height: int,
) -> None:
    (workspace / "notes.txt").write_text("".join(f"note {n}\n" for n in range(30)))
    state = tmp_path / "home" / "state"
    state.mkdir(parents=True)
    (state / "window.json").write_text(
        json.dumps({"x": 0, "y": 0, "width": width, "height": height, "maximized": False})
    )
    devtools = free_port()
    desktop = launch_desktop(QTWEBENGINE_REMOTE_DEBUGGING=f"127.0.0.1:{devtools}")
    desktop.wait_for_line(READY, READY_TIMEOUT)
    (port,) = {port for _, port in ports_of(desktop.process.pid)} - {devtools}
    page = PageSession(devtools, f"http://127.0.0.1:{port}")
    try:
        # The window's own menu bar takes a line of its height from the page.
        inner_width, inner_height = page.evaluate("[innerWidth, innerHeight]")
        assert inner_width == width and height - 40 <= inner_height < height
        start_long_conversation(page, workspace)
        page.evaluate("document.getElementById('composer-input').value = 'And one more thing'")
        sizes = page.evaluate(
            "(() => { const d = document.documentElement;"
            " const t = document.getElementById('transcript').getBoundingClientRect();"
            " const c = document.getElementById('composer').getBoundingClientRect();"
            " return {transcript: t.height, composerBottom: c.bottom,"
            " scrollWidth: d.scrollWidth, scrollHeight: d.scrollHeight}; })()"
        )
        shot = page.call("Page.captureScreenshot", format="png")
        (artifacts / f"window-{width}x{height}.png").write_bytes(base64.b64decode(shot["data"]))
    finally:
        page.close()
    assert sizes["scrollWidth"] <= width and sizes["scrollHeight"] <= inner_height, sizes
    assert sizes["composerBottom"] <= inner_height, sizes
    assert sizes["transcript"] >= inner_height / 2, sizes
    desktop.process.terminate()
    assert desktop.wait_exit() == 0
