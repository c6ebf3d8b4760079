"""Sessions in the browser, against the real server and the demo model: the
search box finds a word only a tool printed in an old session and opens it at
that turn; a finished session is replayed with a scrubber and a speed; the
sidebar pages through a history longer than a page; a finished session is
resumed and its follow-up is drawn live; export and delete."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from server.core.paths import resolve_paths
from server.engine.store.store import Store
from tests.e2e.conftest import OpenApp, SparrowServer, autonomous_server

pytestmark = pytest.mark.e2e

FINAL = {"completed", "failed", "cancelled", "stopped"}
# A word the demo model's list_dir prints (a file's name), never typed by anyone.
RARE = "zanzibarquux"
RUN_TIMEOUT_S = 60.0
WIDE = {"width": 1400, "height": 900}
SMALL = {"width": 800, "height": 600}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparrowServer]:
    with autonomous_server(tmp_path_factory) as running:
        yield running



def api(page: Page, server: SparrowServer, method: str, path: str, body: Any = None) -> Any:
    response = page.request.fetch(server.base_url + path, method=method, data=body)
    assert response.ok, f"{method} {path}: {response.status} {response.text()}"
    return response.json()


def finish(page: Page, server: SparrowServer, run: dict[str, Any]) -> dict[str, Any]:
    """Wait for ``run`` to end (the demo takes a few seconds)."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        info: dict[str, Any] = api(page, server, "GET", f"/api/runs/{run['id']}")["run"]
        if info["status"] in FINAL:
            assert info["status"] == "completed", info
            return info
        page.wait_for_timeout(200)
    pytest.fail(f"run {run['id']} did not end within {RUN_TIMEOUT_S:g} s")


def demo(
    page: Page,
    server: SparrowServer,
    task: str,
    *,
    workspace: Path | None = None,
    after: str | None = None,
) -> dict[str, Any]:
    """A finished demo run: a new session in ``workspace``, or a follow-up of run ``after``."""
    body: dict[str, Any] = {"task": task, "model": "demo"}
    if after:
        body["continue"] = after
    else:
        body["workspace"] = str(workspace)
    return finish(page, server, api(page, server, "POST", "/api/runs", body)["run"])


def open_session(page: Page, run_id: str) -> None:
    page.goto(page.url.split("#")[0] + f"#run={run_id}")
    expect(page.get_by_test_id("replay-bar")).to_be_visible(timeout=20_000)


def test_search_finds_a_word_only_a_tool_printed_and_opens_that_turn(
    open_app: OpenApp, server: SparrowServer, tmp_path: Path, artifacts: Path
) -> None:
    workspace = tmp_path / "old-project"
    workspace.mkdir()
    (workspace / f"{RARE}.txt").write_text("a file whose name is the word\n")
    page = open_app()
    first = demo(page, server, "Look around this project", workspace=workspace)
    # Gone before the follow-ups: only the first run's list_dir printed the word,
    # and the follow-ups push it far above the end of the conversation.
    (workspace / f"{RARE}.txt").unlink()
    second = demo(page, server, "Once more, please", after=first["id"])
    demo(page, server, "And a third time", after=second["id"])
    demo(page, server, "A newer session elsewhere", workspace=tmp_path)

    page.reload()
    box = page.get_by_test_id("session-search")
    box.fill(RARE[:4])  # a prefix first: its answer must not stay once the word is typed
    box.fill(RARE)
    results = page.get_by_test_id("search-result")
    expect(results.first).to_be_visible(timeout=20_000)
    expect(page.get_by_test_id("run-list")).to_be_hidden()
    for hit in results.all():
        expect(hit).to_have_attribute("data-session-id", first["session_id"])
    marks = results.first.locator("mark")
    expect(marks.first).to_have_text(RARE, ignore_case=True)
    hit = results.first
    run_id = hit.get_attribute("data-run-id")
    seq = hit.get_attribute("data-seq")
    assert run_id == first["id"] and seq
    page.set_viewport_size(WIDE)
    page.screenshot(path=str(artifacts / "sessions-search-1400.png"))

    hit.click()
    expect(hit).to_have_attribute("aria-current", "true")
    expect(page.get_by_test_id("run-title")).to_have_text("Look around this project")
    expect(page.get_by_test_id("task-entry")).to_have_count(3, timeout=20_000)
    shown = page.get_by_test_id("transcript").locator(
        f'[data-revealed="true"][data-run-id="{run_id}"]'
    )
    expect(shown).to_have_count(1)
    expect(shown).to_be_in_viewport()
    expect(shown).to_contain_text(RARE)
    # The event of that seq is the one shown: its element, or the one it drew into.
    assert int(shown.get_attribute("data-seq") or 0) <= int(seq)
    # The end of the conversation is out of view: the click scrolled up to the hit.
    expect(page.get_by_test_id("run-end").last).not_to_be_in_viewport()
    page.screenshot(path=str(artifacts / "sessions-search-hit-1400.png"))
    page.set_viewport_size(SMALL)
    page.screenshot(path=str(artifacts / "sessions-search-hit-800.png"))

    # Escape empties the box and brings the sessions back.
    box.press("Escape")
    expect(page.get_by_test_id("run-list")).to_be_visible()
    expect(results).to_have_count(0)


def test_the_scrubber_shows_earlier_points_and_play_reaches_the_end(
    open_app: OpenApp, server: SparrowServer, tmp_path: Path, artifacts: Path
) -> None:
    page = open_app()
    run = demo(page, server, "Show me the replay", workspace=tmp_path)
    open_session(page, run["id"])
    position = page.get_by_test_id("replay-position")
    scrubber = page.get_by_test_id("replay-scrubber")
    total = int(scrubber.get_attribute("max") or 0)
    assert total > 10
    expect(position).to_contain_text(f"{total} / {total}")
    cards = page.get_by_test_id("tool-card")
    expect(cards).to_have_count(4)
    expect(page.get_by_test_id("run-end")).to_have_count(1)

    scrubber.fill(str(total // 3))
    expect(position).to_contain_text(f"{total // 3} / {total}")
    expect(page.get_by_test_id("run-end")).to_have_count(0)
    earlier = cards.count()
    assert earlier < 4
    page.set_viewport_size(SMALL)
    page.screenshot(path=str(artifacts / "sessions-replay-800.png"))
    scrubber.fill("1")
    expect(page.get_by_test_id("task-entry")).to_have_count(1)
    expect(cards).to_have_count(0)

    page.get_by_test_id("replay-speed").select_option("5")
    page.get_by_test_id("replay-play").click()
    expect(position).to_contain_text(f"{total} / {total}", timeout=30_000)
    expect(page.get_by_test_id("replay-play")).to_have_attribute("data-playing", "false")
    expect(cards).to_have_count(4)
    expect(page.get_by_test_id("run-end")).to_have_count(1)
    # Instant from the start: at the end at once.
    scrubber.fill("0")
    expect(page.get_by_test_id("task-entry")).to_have_count(0)
    page.get_by_test_id("replay-speed").select_option("instant")
    page.get_by_test_id("replay-play").click()
    expect(position).to_contain_text(f"{total} / {total}")
    expect(page.get_by_test_id("run-end")).to_have_count(1)
    page.set_viewport_size(WIDE)
    page.screenshot(path=str(artifacts / "sessions-replay-1400.png"))


def test_resume_on_a_finished_session_shows_its_follow_up_live(
    open_app: OpenApp, server: SparrowServer, tmp_path: Path, artifacts: Path
) -> None:
    page = open_app()
    run = demo(page, server, "Start something to resume", workspace=tmp_path)
    open_session(page, run["id"])
    expect(page.get_by_test_id("run-status")).to_have_text("completed")
    page.get_by_test_id("session-resume").click()
    composer = page.get_by_test_id("composer-input")
    expect(composer).to_be_focused()
    composer.fill("Carry on from where you stopped")
    composer.press("Enter")
    # Live: the replay bar goes, the new run is drawn as it goes, then ends.
    expect(page.get_by_test_id("replay-bar")).to_be_hidden()
    expect(page.get_by_test_id("task-entry")).to_have_count(2)
    expect(page.get_by_test_id("task-entry").last).to_contain_text(
        "Carry on from where you stopped"
    )
    expect(page.get_by_test_id("run-end")).to_have_count(2, timeout=RUN_TIMEOUT_S * 1000)
    expect(page.get_by_test_id("run-status")).to_have_text("completed")
    session = api(page, server, "GET", f"/api/sessions/{run['session_id']}/runs")["runs"]
    assert [r["task"] for r in session] == [
        "Start something to resume",
        "Carry on from where you stopped",
    ]
    row = page.locator(f'[data-testid="run-item"][data-session-id="{run["session_id"]}"]')
    expect(row.get_by_test_id("run-item-count")).to_have_text("2 exchanges")
    page.set_viewport_size(WIDE)
    page.screenshot(path=str(artifacts / "sessions-resumed-1400.png"))


def test_a_follow_up_from_another_window_leaves_the_replay_here(
    open_app: OpenApp, server: SparrowServer, tmp_path: Path
) -> None:
    """Two windows on one finished session: the one that resumes it and the one
    that only watches both show the follow-up live (the watcher without a reload)."""
    watcher = open_app()
    run = demo(watcher, server, "Watched from two windows", workspace=tmp_path)
    open_session(watcher, run["id"])
    other = open_app()
    resumed = api(other, server, "POST", f"/api/sessions/{run['session_id']}/resume",
                  {"task": "Sent from the other window", "model": "demo"})["run"]
    expect(watcher.get_by_test_id("replay-bar")).to_be_hidden(timeout=30_000)
    entries = watcher.get_by_test_id("task-entry")
    expect(entries).to_have_count(2)
    expect(entries.last).to_contain_text("Sent from the other window")
    expect(watcher.get_by_test_id("run-end")).to_have_count(2, timeout=RUN_TIMEOUT_S * 1000)
    expect(watcher.get_by_test_id("run-status")).to_have_text("completed")
    assert watcher.url.endswith(f"#run={resumed['id']}")


def test_export_and_delete_a_session(
    open_app: OpenApp, server: SparrowServer, tmp_path: Path
) -> None:
    page = open_app()
    run = demo(page, server, "A session to export then delete", workspace=tmp_path)
    open_session(page, run["id"])
    page.get_by_test_id("session-export").click()
    with page.expect_download() as download:
        page.get_by_test_id("export-json").click()
    exported = json.loads(Path(download.value.path()).read_text())
    assert "A session to export then delete" in json.dumps(exported)
    page.get_by_test_id("session-export").click()
    with page.expect_download() as download:
        page.get_by_test_id("export-markdown").click()
    assert "A session to export then delete" in Path(download.value.path()).read_text()

    row = page.locator(f'[data-testid="run-item"][data-session-id="{run["session_id"]}"]')
    expect(row).to_have_count(1)
    # Its search hits go with it.
    page.get_by_test_id("session-search").fill("to export then delete")
    hit = page.locator(f'[data-testid="search-result"][data-session-id="{run["session_id"]}"]')
    expect(hit.first).to_be_visible()  # its title and its task
    page.get_by_test_id("session-delete").click()
    dialog = page.get_by_test_id("delete-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_test_id("delete-cancel").click()
    expect(row).to_have_count(1)
    page.get_by_test_id("session-delete").click()
    dialog.get_by_test_id("delete-confirm").click()
    expect(dialog).to_be_hidden()
    expect(hit).to_have_count(0)
    page.get_by_test_id("session-search").fill("")
    expect(row).to_have_count(0)
    expect(page.get_by_test_id("run-placeholder")).to_be_visible()
    missing = page.request.get(f"{server.base_url}/api/sessions/{run['session_id']}")
    assert missing.status == 404


def test_the_sidebar_pages_through_a_long_history_grouped_by_day_and_workspace(
    open_app: OpenApp, server: SparrowServer, tmp_path: Path, artifacts: Path
) -> None:
    """More sessions than a page, made directly in the store the server uses."""
    store = Store(resolve_paths({"SPARROW_HOME": str(server.home)}).database)
    made = 130
    try:
        for n in range(made):
            workspace = str(tmp_path / f"project-{n % 3}")
            session_id = store.create_session(workspace, f"generated session {n:03d}")
            run_id = f"r-generated-{n:03d}"
            store.create_run(
                run_id=run_id,
                session_id=session_id,
                workspace=workspace,
                task=f"generated session {n:03d}",
                model="demo",
                transcript=tmp_path / f"{run_id}.jsonl",
            )
            store.finish_run(run_id, status="completed", reason="", turns=1)
    finally:
        store.close()
    page = open_app()
    rows = page.locator('[data-testid="run-item"]', has_text="generated session")
    expect(rows.first).to_be_visible(timeout=20_000)
    first_page = rows.count()
    assert 0 < first_page < made
    expect(page.get_by_test_id("session-day").first).to_have_text("Today")
    expect(page.get_by_test_id("session-workspace").first).to_be_visible()
    # Scrolling to the end loads the next pages, until the whole history is listed.
    listing = page.get_by_test_id("run-list")
    deadline = time.monotonic() + 60
    while rows.count() < made and time.monotonic() < deadline:
        listing.evaluate("el => { el.scrollTop = el.scrollHeight; }")
        page.wait_for_timeout(150)
    expect(rows).to_have_count(made)
    expect(page.get_by_test_id("sessions-more")).to_be_hidden()
    names = [
        text.strip() for text in rows.locator('[data-testid="session-title"]').all_text_contents()
    ]
    assert len(set(names)) == made, "a session listed twice"
    page.set_viewport_size(SMALL)
    page.screenshot(path=str(artifacts / "sessions-sidebar-800.png"))


def test_settings_show_the_age_limit_and_where_to_change_it(
    open_app: OpenApp, server: SparrowServer, artifacts: Path
) -> None:
    page = open_app()
    page.get_by_test_id("settings-tab").click()
    expect(page.get_by_test_id("sessions-retention")).to_contain_text("no age limit")
    expect(page.get_by_test_id("sessions-retention-where")).to_contain_text("keep_days")
    config = resolve_paths({"SPARROW_HOME": str(server.home)}).config_file
    expect(page.get_by_test_id("sessions-config-file")).to_have_text(str(config))
    # Read when shown: a limit written meanwhile appears on the next visit.
    text = config.read_text()
    try:
        config.write_text(text + "[sessions]\nkeep_days = 30\n")
        page.get_by_test_id("runs-tab").click()
        page.get_by_test_id("settings-tab").click()
        expect(page.get_by_test_id("sessions-retention")).to_contain_text("not active for 30 days")
        page.set_viewport_size(SMALL)
        page.get_by_test_id("sessions-retention-where").scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts / "sessions-settings-800.png"))
    finally:
        config.write_text(text)


def test_a_late_answer_to_an_older_query_is_dropped_and_snippets_stay_text(
    open_app: OpenApp, server: SparrowServer, tmp_path: Path
) -> None:
    """The first query's real answer is held back until the second's is shown:
    the list must still be the second's. A file name that looks like HTML is
    shown as the characters it is."""
    workspace = tmp_path / "html-names"
    workspace.mkdir()
    (workspace / "<img src=x onerror=alert(1)>quokkafish.txt").write_text("x\n")
    (workspace / "wombatfish.txt").write_text("x\n")
    page = open_app()
    demo(page, server, "List the odd names", workspace=workspace)

    held: list[Any] = []

    def hold_the_first(route: Any) -> None:
        if "quokkafish" in route.request.url and not held:
            held.append(route)  # answered later, after the newer query's answer
        else:
            route.continue_()

    page.route("**/api/sessions/search?*", hold_the_first)
    page.reload()
    box = page.get_by_test_id("session-search")
    box.fill("quokkafish")
    deadline = time.monotonic() + 20
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "the first query was never sent"
    box.fill("wombatfish")
    results = page.get_by_test_id("search-result")
    expect(results.locator("mark").first).to_have_text("wombatfish", ignore_case=True)
    held[0].continue_()  # the stale answer arrives now
    page.wait_for_timeout(500)
    expect(results.locator("mark").first).to_have_text("wombatfish", ignore_case=True)
    # Only the newer query's word is marked (both names are in the same listing).
    marked = {text.lower() for text in results.locator("mark").all_text_contents()}
    assert marked == {"wombatfish"}

    box.fill("quokkafish")
    snippet = page.get_by_test_id("search-snippet").first
    expect(snippet).to_contain_text("<img src=x onerror=alert(1)>")
    expect(page.get_by_test_id("search-results").locator("img")).to_have_count(0)


def test_resuming_a_compacted_session_opens_the_new_session_it_makes(
    open_app: OpenApp, server: SparrowServer, tmp_path: Path
) -> None:
    """Once compacted, a session resumes as a new one from its handoff doc:
    the window opens that one, live, instead of adding to the old."""
    page = open_app()
    run = demo(page, server, "A session to compact", workspace=tmp_path)
    compacting = api(page, server, "POST", f"/api/runs/{run['id']}/compact")["run"]
    finish(page, server, compacting)
    open_session(page, run["id"])
    expect(page.get_by_test_id("compaction")).to_have_count(1)
    page.get_by_test_id("session-resume").click()
    page.get_by_test_id("composer-input").fill("Pick up from the handoff")
    page.get_by_test_id("composer-input").press("Enter")
    expect(page.get_by_test_id("run-title")).to_have_text("Pick up from the handoff")
    expect(page.get_by_test_id("task-entry")).to_have_count(1)
    expect(page.get_by_test_id("run-end")).to_have_count(1, timeout=RUN_TIMEOUT_S * 1000)
    new_run = page.url.split("#run=")[1]
    resumed = api(page, server, "GET", f"/api/runs/{new_run}")["run"]
    assert resumed["session_id"] != run["session_id"]
    rows = page.get_by_test_id("run-item")
    expect(rows.filter(has_text="Pick up from the handoff")).to_have_attribute(
        "aria-current", "true"
    )
    expect(rows.filter(has_text="A session to compact")).to_have_count(1)
