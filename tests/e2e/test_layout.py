"""The run view at 800x600 and 1400x900 with a long conversation and the composer:
nothing spills out of the window, and the conversation gets most of the height.
Screenshots of both are left in artifacts/ to be looked at."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import SparrowServer
from tests.e2e.test_browser import RUN_TIMEOUT_MS, open_scripted_run

pytestmark = pytest.mark.e2e


def long_turns() -> list[dict[str, object]]:
    """A scripted model's turns: eight reads of notes.txt, each told about, then an answer."""
    turns: list[dict[str, object]] = [
        {
            "text": f"Step {n}: reading the notes again to be sure of point {n}. " * 3,
            "tool_calls": [{"tool": "read_file", "args": {"path": "notes.txt"}}],
        }
        for n in range(8)
    ]
    return [*turns, {"text": "All read. " * 20}]


def long_conversation(app: Page, server: SparrowServer, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("".join(f"note {n}\n" for n in range(30)))
    script = {"turns": long_turns()}
    open_scripted_run(app, server, workspace, "Read the notes, many times over.", script)
    expect(app.get_by_test_id("run-end")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    # Opened again once finished, it is a replay: its bar is one more row, the
    # tightest case (a run that ends before the page has loaded it opens so too).
    app.reload()
    expect(app.get_by_test_id("replay-bar")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(app.get_by_test_id("composer")).to_be_visible()


def measure(app: Page) -> dict[str, float]:
    return app.evaluate(
        """() => {
          const box = (id) => document.getElementById(id).getBoundingClientRect();
          const doc = document.documentElement;
          return {
            transcript: box("transcript").height,
            composerBottom: box("composer").bottom,
            scrollWidth: doc.scrollWidth, scrollHeight: doc.scrollHeight,
            width: innerWidth, height: innerHeight,
          };
        }"""
    )


@pytest.mark.parametrize(("width", "height"), [(800, 600), (1400, 900)])
def test_the_conversation_gets_most_of_the_height(
    app: Page,
    sparrow_server: SparrowServer,
    workspace: Path,
    artifacts: Path,
    width: int,
    height: int,
) -> None:
    app.set_viewport_size({"width": width, "height": height})
    long_conversation(app, sparrow_server, workspace)
    # The model list fills the composer's select: measured once it has, at its widest.
    expect(app.get_by_test_id("composer-model").locator("option")).not_to_have_count(0)
    app.get_by_test_id("composer-input").fill("And one more thing about the notes")
    sizes = measure(app)
    app.screenshot(path=artifacts / f"run-view-{width}x{height}.png")
    # Nothing spills out of the window: no page scroll, the composer in view.
    assert sizes["scrollWidth"] <= width and sizes["scrollHeight"] <= height, sizes
    assert sizes["composerBottom"] <= height, sizes
    # The conversation is the biggest thing there: at least half the height.
    assert sizes["transcript"] >= height / 2, sizes
