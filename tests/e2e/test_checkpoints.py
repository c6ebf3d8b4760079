"""The checkpoint timeline in headless Chromium against the real server: a demo
run's checkpoints are listed, one's diff to the workspace names the file changed
since, and Rewind (after a confirmation showing what will change) puts the file
on disk back."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from server.providers.demo import DEMO_CONTENT, DEMO_FILE
from tests.e2e.test_browser import RUN_TIMEOUT_MS, run_id_of, start_run


@pytest.mark.e2e
def test_timeline_previews_a_diff_and_rewinds_the_file(
    app: Page, workspace: Path, artifacts: Path
) -> None:
    start_run(app, workspace, "Show me what a Sparrow run looks like.")
    run_id_of(app)
    expect(app.get_by_test_id("run-status")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
    assert (workspace / DEMO_FILE).read_text() == DEMO_CONTENT

    # Changed by hand after the run.
    (workspace / DEMO_FILE).write_text("# Overwritten by hand\n\nThe demo text is gone.\n")

    timeline = app.get_by_test_id("checkpoints")
    expect(timeline).to_be_visible()
    # The demo checkpoints before write_file and before run_shell: the latter holds the file.
    checkpoints = timeline.get_by_test_id("checkpoint")
    expect(checkpoints).to_have_count(2)
    expect(checkpoints.first).to_contain_text("run_shell")
    expect(checkpoints.first).to_contain_text(DEMO_FILE)
    checkpoints.first.click()

    preview = app.get_by_test_id("checkpoint-preview")
    diff = preview.locator(f'[data-testid="diff-file"][data-path="{DEMO_FILE}"]')
    expect(diff).to_be_visible()
    expect(diff.locator(".diff-status")).to_have_text("modified")
    expect(diff.locator(".diff-add")).to_contain_text(["+# Overwritten by hand"])
    expect(diff.locator(".diff-del").first).to_be_visible()
    app.set_viewport_size({"width": 1280, "height": 1000})
    app.evaluate("document.fonts.ready")
    app.screenshot(path=artifacts / "checkpoints.png")

    preview.get_by_test_id("rewind-button").click()
    dialog = app.get_by_test_id("rewind-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_test_id("rewind-plan")).to_contain_text(f"restore{DEMO_FILE}")
    app.screenshot(path=artifacts / "checkpoints-confirm.png")
    dialog.get_by_test_id("rewind-confirm").click()

    result = dialog.get_by_test_id("rewind-result")
    expect(result).to_contain_text(f"restored{DEMO_FILE}")
    expect(dialog).to_contain_text("To undo, rewind to checkpoint")
    assert (workspace / DEMO_FILE).read_text() == DEMO_CONTENT
    dialog.get_by_test_id("rewind-cancel").click()
    expect(dialog).to_be_hidden()
    # The checkpoint the rewind took first is on the timeline: the rewind can be undone there.
    expect(checkpoints).to_have_count(3)
    expect(checkpoints.first).to_contain_text("rewind")
    # The preview is asked again: the workspace matches the checkpoint now.
    expect(preview).to_contain_text("No changes")
