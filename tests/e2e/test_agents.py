"""The Agents view in headless Chromium against the real server: a new agent
written in the editor (a bad file refused with its reason, nothing written),
listed with its schedule and next run, an invalid file listed with its reason,
and Run now starting an ordinary run that opens like any other."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page, expect

if TYPE_CHECKING:
    from tests.e2e.conftest import SparrowServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def agents_page(app: Page, sparrow_server: SparrowServer) -> Iterator[Page]:
    """The Agents tab, opened from the header; the shared server's agents removed after."""
    expect(app.get_by_test_id("connection-status")).to_have_attribute("data-state", "open")
    app.get_by_test_id("agents-tab").click()
    expect(app.get_by_test_id("agents")).to_be_visible()
    expect(app).to_have_url(f"{sparrow_server.base_url}/#agents")
    try:
        yield app
    finally:
        for path in (sparrow_server.home / "config" / "agents").glob("*.agent.md"):
            path.unlink()


def test_write_an_agent_see_its_schedule_and_run_it_now(
    agents_page: Page, sparrow_server: SparrowServer, workspace: Path, artifacts: Path
) -> None:
    page = agents_page
    folder = sparrow_server.home / "config" / "agents"
    expect(page.get_by_test_id("agents-empty")).to_be_visible()
    expect(page.get_by_test_id("agents-folder")).to_have_text(str(folder))

    page.get_by_test_id("agent-new").click()
    expect(page.get_by_test_id("agent-text")).to_have_value(
        "---\nworkspace: /path/to/your/project\nmodel: auto\nmode: supervised\n"
        "# A cron expression, quoted; leave out to run by hand only.\n"
        '# schedule: "0 9 * * 1-5"\nmissed: run-once\n---\n'
        "Say here what the agent should do each time it runs.\n"
    )
    page.get_by_test_id("agent-name").fill("greeter")
    bad = (
        f'---\nworkspace: {workspace}\nmodel: demo\nschedule: "0 4 1 1 *"\nautonomy: 7\n'
        "---\nSay hello.\n"
    )
    page.get_by_test_id("agent-text").fill(bad)
    page.get_by_test_id("agent-save").click()
    error = page.get_by_test_id("agent-editor-error")
    expect(error).to_have_text("the autonomy level must be from 0.0 to 1.0, not 7")
    expect(page.get_by_test_id("agent-text")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_test_id("agent-text")).to_have_value(bad)  # nothing typed is lost
    assert not (folder / "greeter.agent.md").exists()
    page.screenshot(path=artifacts / "agents-refused.png")

    page.get_by_test_id("agent-text").fill(bad.replace("autonomy: 7\n", ""))
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-editor")).to_be_hidden()
    row = page.get_by_test_id("agent-list").get_by_test_id("agent")
    expect(row).to_have_count(1)
    # Due once a year: the app's scheduler starts nothing while the test runs.
    expect(row.get_by_test_id("agent-schedule")).to_have_text("0 4 1 1 *")
    expect(row.get_by_test_id("agent-next")).to_contain_text("next ")
    expect(row).to_contain_text("never run")
    assert (folder / "greeter.agent.md").read_text().startswith(f"---\nworkspace: {workspace}\n")

    (folder / "typo.agent.md").write_text(f"---\nworkspace: {workspace}\nshedule: daily\n---\nx\n")
    page.get_by_test_id("runs-tab").click()
    page.get_by_test_id("agents-tab").click()
    invalid = page.get_by_test_id("agent-invalid")
    expect(invalid).to_have_count(1)
    expect(invalid.get_by_test_id("agent-reason")).to_contain_text("unknown key shedule")

    row.get_by_test_id("agent-run").click()
    started = page.get_by_test_id("agent-started")
    expect(started).to_be_visible()
    expect(row).to_contain_text("last run completed", timeout=30_000)
    expect(row.get_by_test_id("agent-run")).to_have_text("Run now")
    page.screenshot(path=artifacts / "agents-list.png")
    started.click()
    expect(page.get_by_test_id("run-status")).to_have_text("completed", timeout=30_000)
    # The sidebar says which agent started the conversation (GET /api/sessions).
    session = page.locator(f'[data-testid="run-item"][data-run-id="{started.inner_text()}"]')
    expect(session.get_by_test_id("session-agent")).to_have_text("agent greeter")
    expect(session).to_have_attribute("aria-label", re.compile(r"started by the agent greeter"))
    page.screenshot(path=artifacts / "agents-session-in-sidebar.png")

    page.get_by_test_id("agents-tab").click()
    invalid.get_by_test_id("agent-edit").click()
    expect(page.get_by_test_id("agent-editor-error")).to_contain_text("unknown key shedule")
    expect(page.get_by_test_id("agent-name")).to_have_value("typo")


def test_delete_asks_first_and_is_refused_while_the_agents_run_goes(
    agents_page: Page, sparrow_server: SparrowServer, workspace: Path, artifacts: Path
) -> None:
    page = agents_page
    folder = sparrow_server.home / "config" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    # Supervised: the demo's write waits for an answer, so its run goes on.
    text = f"---\nworkspace: {workspace}\nmodel: demo\nmode: supervised\n---\nKeep watch.\n"
    (folder / "keeper.agent.md").write_text(text)
    (folder / "spare.agent.md").write_text(text)
    page.get_by_test_id("runs-tab").click()
    page.get_by_test_id("agents-tab").click()
    keeper = page.locator('[data-testid="agent"][data-name="keeper"]')
    spare = page.locator('[data-testid="agent"][data-name="spare"]')
    expect(keeper).to_be_visible()

    # Asked first: Cancel keeps it.
    spare.get_by_test_id("agent-delete").click()
    dialog = page.get_by_test_id("agent-delete-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("“spare”")
    page.get_by_test_id("agent-delete-cancel").click()
    expect(dialog).to_be_hidden()
    assert (folder / "spare.agent.md").exists()

    keeper.get_by_test_id("agent-run").click()
    expect(page.get_by_test_id("agent-started")).to_be_visible()
    run_id = page.get_by_test_id("agent-started").inner_text()
    expect(keeper.get_by_test_id("agent-run")).to_have_text("Running…", timeout=30_000)
    keeper.get_by_test_id("agent-delete").click()
    page.get_by_test_id("agent-delete-confirm").click()
    refused = page.get_by_test_id("agent-delete-error")
    expect(refused).to_have_text(
        f"Could not delete: the agent 'keeper' is running ({run_id}): "
        "stop it or wait for it before you delete it"
    )
    expect(dialog).to_be_visible()
    page.screenshot(path=artifacts / "agents-delete-refused.png")
    assert (folder / "keeper.agent.md").read_text() == text
    page.get_by_test_id("agent-delete-cancel").click()

    stopped = page.request.post(f"{sparrow_server.base_url}/api/agents/keeper/stop")
    assert stopped.status == 202, stopped.text()
    expect(keeper).to_contain_text("last run cancelled", timeout=30_000)
    keeper.get_by_test_id("agent-delete").click()
    expect(page.get_by_test_id("agent-delete-error")).to_be_hidden()
    page.get_by_test_id("agent-delete-confirm").click()
    expect(dialog).to_be_hidden()
    expect(keeper).to_have_count(0)
    expect(page.get_by_test_id("agents-notice")).to_have_text("Deleted keeper.")
    assert not (folder / "keeper.agent.md").exists()
    expect(spare).to_be_visible()
