"""``@`` completion in the browser, against the real server: typing ``@mai`` in a
conversation's composer lists ``main.py`` (never the .gitignored copy), Enter
puts ``@src/main.py`` in the composer instead of sending, and the new
conversation's task field completes too."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.test_browser import RUN_TIMEOUT_MS, start_run

pytestmark = pytest.mark.e2e


def project(workspace: Path) -> Path:
    for name in ["src/main.py", "src/lib/domain.py", "dist/main.py", "README.md"]:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("x\n")
    (workspace / ".gitignore").write_text("dist/\n")
    return workspace


def popup_of(page: Page, field: Locator) -> Locator:
    """The completion list of ``field`` (each completing field has its own)."""
    return page.locator(f"#{field.get_attribute('aria-controls')}")


def test_at_mai_completes_src_main_py_in_the_composer(
    app: Page, workspace: Path, artifacts: Path
) -> None:
    start_run(app, project(workspace), "Show me what a Sparrow run looks like.")
    expect(app.get_by_test_id("run-status")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
    composer = app.get_by_test_id("composer-input")
    composer.click()
    composer.press_sequentially("Look at @mai")
    popup = popup_of(app, composer)
    items = popup.get_by_test_id("mention-item")
    expect(items.first).to_contain_text("main.py", timeout=15_000)
    expect(items.first).to_contain_text("src/")
    shown = items.all_text_contents()
    assert not any("dist/" in text for text in shown), shown
    expect(popup).to_have_attribute("data-side", "above")
    app.screenshot(path=artifacts / "mention-popup.png")
    composer.press("Enter")
    expect(composer).to_have_value("Look at @src/main.py ")
    expect(popup).to_be_hidden()
    # Enter chose: nothing was sent.
    expect(app.get_by_test_id("task-entry")).to_have_count(1)

    # A folder keeps the list open on what is inside; arrows move; Esc closes.
    composer.press_sequentially("and @sr")
    expect(items.first).to_have_text("src/")
    composer.press("Tab")
    expect(composer).to_have_value("Look at @src/main.py and @src/")
    expect(items).to_have_text(["lib/src/", "main.pysrc/", "domain.pysrc/lib/"])
    composer.press("ArrowDown")
    expect(items.nth(1)).to_have_attribute("aria-selected", "true")
    composer.press("Escape")
    expect(popup).to_be_hidden()
    composer.press("Enter")  # the list is closed: Enter sends
    expect(app.get_by_test_id("task-entry")).to_have_count(2, timeout=RUN_TIMEOUT_MS)


def test_the_task_field_of_a_new_conversation_completes_too(app: Page, workspace: Path) -> None:
    app.get_by_test_id("workspace-input").fill(str(project(workspace)))
    prompt = app.get_by_test_id("prompt-input")
    prompt.click()
    prompt.press_sequentially("@dom")
    expect(popup_of(app, prompt).get_by_test_id("mention-item").first).to_contain_text(
        "domain.py", timeout=15_000
    )
    prompt.press("Enter")
    expect(prompt).to_have_value("@src/lib/domain.py ")
