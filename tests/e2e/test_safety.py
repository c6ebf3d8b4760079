"""The safety UI in headless Chromium against the real server: the mode switch
and the autonomy dial (pointer-free: the keyboard), approval cards in the
transcript (allow once, deny with a message, allow always and the rule it
saves), how the gate decided each call, the Rules view and the emergency stop.

The shared test server starts in the autonomous mode; each test here first
switches to Supervised through the UI and puts autonomous back at the end."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import FloatRect, Locator, Page, expect

from server.providers.demo import DEMO_FILE
from tests.e2e.test_browser import (
    RUN_TIMEOUT_MS,
    open_scripted_run,
    run_id_of,
    start_run,
    tool_card,
)

if TYPE_CHECKING:
    from tests.e2e.conftest import OpenApp, SparrowServer

pytestmark = pytest.mark.e2e


def open_safety(page: Page) -> Locator:
    panel = page.get_by_test_id("safety-panel")
    if panel.is_hidden():
        page.get_by_test_id("safety-toggle").click()
    expect(panel).to_be_visible()
    return panel


def close_safety(page: Page) -> None:
    panel = page.get_by_test_id("safety-panel")
    if panel.is_visible():
        page.keyboard.press("Escape")
    expect(panel).to_be_hidden()


def choose_mode(page: Page, label: str) -> None:
    switch = open_safety(page).get_by_test_id("mode-switch")
    switch.get_by_text(label, exact=True).click()
    expect(switch.get_by_role("radio", name=label, exact=True)).to_be_checked()


def safety(page: Page, server: SparrowServer) -> dict[str, Any]:
    answer = page.request.get(f"{server.base_url}/api/safety")
    assert answer.ok, answer.text()
    data: dict[str, Any] = answer.json()
    return data


@pytest.fixture
def supervised(app: Page, sparrow_server: SparrowServer) -> Iterator[Page]:
    """The app, switched to Supervised through the mode switch; autonomous again afterwards."""
    expect(app.get_by_test_id("connection-status")).to_have_attribute("data-state", "open")
    try:
        choose_mode(app, "Supervised")
        expect(app.get_by_test_id("safety-summary")).to_contain_text("Supervised")
        assert safety(app, sparrow_server)["mode"] == "supervised"
        close_safety(app)
        yield app
    finally:
        answer = app.request.put(
            f"{sparrow_server.base_url}/api/safety", data={"mode": "autonomous"}
        )
        assert answer.ok, answer.text()


def approval_card(page: Page, tool: str) -> Locator:
    return page.get_by_test_id("transcript").locator(
        f'[data-testid="approval-card"][data-tool="{tool}"]'
    )


def events_of(page: Page, server: SparrowServer, run_id: str) -> list[dict[str, Any]]:
    answer = page.request.get(f"{server.base_url}/api/runs/{run_id}/events")
    assert answer.ok, answer.text()
    events: list[dict[str, Any]] = answer.json()["events"]
    return events


def test_a_supervised_demo_run_asks_and_allow_once_lets_it_finish(
    supervised: Page, workspace: Path, sparrow_server: SparrowServer, artifacts: Path
) -> None:
    page = supervised
    start_run(page, workspace, "Show me a supervised run.")
    run_id = run_id_of(page)

    # list_dir is read-only: allowed without asking, and the card says why.
    expect(tool_card(page, "list_dir").get_by_test_id("gate-decision")).to_have_attribute(
        "data-decision", "allow"
    )
    # write_file is Mutating: Supervised asks.
    card = approval_card(page, "write_file")
    expect(card).to_be_visible(timeout=RUN_TIMEOUT_MS)
    write = tool_card(page, "write_file")
    expect(write).to_have_attribute("data-state", "waiting")
    expect(write.get_by_test_id("gate-decision")).to_have_attribute("data-decision", "ask")
    expect(write.get_by_test_id("gate-text")).to_contain_text("asked")
    expect(card.get_by_test_id("tool-args")).to_contain_text(DEMO_FILE)
    expect(card.get_by_test_id("approve-rule")).to_have_text(f"write_file({DEMO_FILE})")
    expect(card.get_by_test_id("approval-countdown")).to_have_text(re.compile(r"^\d+:\d\d$"))
    assert card.get_attribute("data-call-id")
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    # The runs list says which run waits, wherever the user is looking.
    row = page.locator(f'[data-testid="run-item"][data-run-id="{run_id}"]')
    expect(row.get_by_test_id("run-item-waiting")).to_be_visible()

    card.scroll_into_view_if_needed()
    page.evaluate("document.fonts.ready")
    page.screenshot(path=artifacts / "safety-approval-card.png")

    card.get_by_test_id("approve-once").click()
    expect(card).to_have_attribute("data-state", "resolved")
    expect(card.get_by_test_id("approval-resolved")).to_contain_text("allowed once")
    expect(write.get_by_test_id("result-marker")).to_have_text("ok")

    # run_shell (Exec) asks too. Reload while it waits: the card comes back from history.
    expect(approval_card(page, "run_shell")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    page.reload()
    expect(page).to_have_url(re.compile(f"#run={run_id}$"))
    shell_card = approval_card(page, "run_shell")
    expect(shell_card).to_have_attribute("data-state", "waiting")
    # After a reload the list learns it from the server (RunInfo.waiting).
    expect(row.get_by_test_id("run-item-waiting")).to_be_visible()
    expect(approval_card(page, "write_file")).to_have_attribute("data-state", "resolved")
    # As in the desktop window, where pywebview's bridge is present: the answer
    # is the desktop surface's, not the browser's.
    page.evaluate("window.pywebview = window.pywebview || {}")
    shell_card.get_by_test_id("approve-once").click()

    expect(page.get_by_test_id("run-status")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
    expect(tool_card(page, "run_shell").get_by_test_id("result-marker")).to_have_text("ok")
    expect(page.get_by_test_id("approve-once")).to_have_count(0)
    expect(row.get_by_test_id("run-item-waiting")).to_be_hidden()
    assert (workspace / DEMO_FILE).is_file()
    resolved = [
        e for e in events_of(page, sparrow_server, run_id) if e["type"] == "approval_resolved"
    ]
    assert [e["decision"] for e in resolved] == ["allow_once", "allow_once"]
    assert [e["by"] for e in resolved] == ["web", "desktop"]


def test_deny_with_a_message_is_what_the_model_receives(
    supervised: Page, workspace: Path, sparrow_server: SparrowServer
) -> None:
    page = supervised
    start_run(page, workspace, "Try to write, and be told no.")
    run_id = run_id_of(page)
    card = approval_card(page, "write_file")
    expect(card).to_be_visible(timeout=RUN_TIMEOUT_MS)
    message = "Not in this folder, please."
    card.get_by_test_id("deny-message").fill(message)
    card.get_by_test_id("deny").click()

    expect(card).to_have_attribute("data-state", "resolved")
    expect(card.get_by_test_id("approval-resolved")).to_contain_text("denied")
    expect(card.get_by_test_id("approval-message")).to_contain_text(message)
    write = tool_card(page, "write_file")
    expect(write).to_have_attribute("data-state", "denied")
    expect(write.get_by_test_id("gate-answer")).to_contain_text(message)
    expect(write.get_by_test_id("result-marker")).to_have_text("denied")
    expect(write.get_by_test_id("tool-output")).to_contain_text(message)

    # The model got exactly that output.
    results = [
        e
        for e in events_of(page, sparrow_server, run_id)
        if e["type"] == "tool_result" and e["tool"] == "write_file"
    ]
    assert len(results) == 1 and results[0]["ok"] is False
    assert message in results[0]["output"]
    expect(write.get_by_test_id("tool-output")).to_have_text(results[0]["output"])
    assert not (workspace / DEMO_FILE).exists()

    # The run goes on; its shell command asks in turn.
    shell = approval_card(page, "run_shell")
    expect(shell).to_be_visible(timeout=RUN_TIMEOUT_MS)
    shell.get_by_test_id("deny").click()
    expect(page.get_by_test_id("run-status")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)


def test_allow_always_saves_the_rule_shown_and_the_next_call_runs_by_it(
    supervised: Page, workspace: Path, sparrow_server: SparrowServer
) -> None:
    page = supervised
    call = {"tool": "write_file", "args": {"path": "notes.txt", "content": "hello\n"}}
    script = {
        "turns": [
            {"text": "Writing the note.", "tool_calls": [call]},
            {"text": "Writing it again.", "tool_calls": [call]},
            {"text": "Done."},
        ]
    }
    run_id = open_scripted_run(page, sparrow_server, workspace, "Write a note twice.", script)

    card = page.get_by_test_id("approval-card")
    expect(card).to_have_count(1, timeout=RUN_TIMEOUT_MS)
    asked = [
        e for e in events_of(page, sparrow_server, run_id) if e["type"] == "approval_requested"
    ]
    rule = asked[0]["suggested_rule"]
    assert rule == "write_file(notes.txt)"
    expect(card.get_by_test_id("approve-rule")).to_have_text(rule)
    card.get_by_test_id("approve-scope").select_option("workspace")
    expect(card).to_contain_text("for this workspace")
    card.get_by_test_id("approve-always").click()

    expect(page.get_by_test_id("run-status")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
    expect(card.get_by_test_id("approval-saved-rule")).to_have_text(rule)
    # The second identical call ran without a card, by the rule just saved.
    expect(page.get_by_test_id("approval-card")).to_have_count(1)
    cards = page.get_by_test_id("transcript").locator(
        '[data-testid="tool-card"][data-tool="write_file"]'
    )
    expect(cards).to_have_count(2)
    expect(cards.nth(0).get_by_test_id("gate-answer")).to_contain_text("allowed always")
    second = cards.nth(1)
    expect(second).to_have_attribute("data-state", "ok")
    expect(second.get_by_test_id("gate-decision")).to_have_attribute("data-decided-by", "rule")
    expect(second.get_by_test_id("gate-text")).to_have_text(f"allowed by rule {rule}")

    # The Rules view lists it, for this workspace, used once.
    page.get_by_test_id("rules-tab").click()
    rules = page.get_by_test_id("rules")
    expect(rules).to_be_visible()
    expect(page.get_by_test_id("rules-workspace")).to_have_value(str(workspace))
    row = rules.locator('[data-testid="rule"][data-source="user"]').filter(has_text=rule)
    expect(row).to_have_count(1)
    expect(row).to_have_attribute("data-effect", "allow")
    expect(row).to_contain_text("workspace")
    expect(row.get_by_test_id("rule-hits")).to_have_text("1")
    # Defaults are listed but cannot be deleted.
    defaults = rules.locator('[data-testid="rule"][data-source="default"]')
    expect(defaults.first).to_be_visible()
    expect(defaults.get_by_test_id("rule-delete")).to_have_count(0)


def test_rules_view_adds_edits_deletes_and_shows_the_server_error(
    app: Page, workspace: Path, sparrow_server: SparrowServer, artifacts: Path
) -> None:
    page = app
    page.get_by_test_id("workspace-input").fill(str(workspace))
    page.get_by_test_id("rules-tab").click()
    expect(page.get_by_test_id("rules-workspace")).to_have_value(str(workspace))
    rules = page.get_by_test_id("rules")

    page.get_by_test_id("rule-spec").fill("run_shell(npm test:*)")
    page.get_by_test_id("rule-effect").select_option("allow")
    page.get_by_test_id("rule-scope").select_option("workspace")
    page.get_by_test_id("rule-add-button").click()
    row = rules.locator('[data-testid="rule"][data-source="user"]')
    expect(row).to_have_count(1)
    expect(row.get_by_test_id("rule-text")).to_have_text("run_shell(npm test:*)")

    # A spec the server cannot parse: its message, inline.
    page.get_by_test_id("rule-spec").fill("run_shell(")
    page.get_by_test_id("rule-add-button").click()
    expect(page.get_by_test_id("rules-error")).to_be_visible()
    expect(page.get_by_test_id("rule-spec")).to_have_attribute("aria-invalid", "true")

    row.get_by_test_id("rule-edit").click()
    row.get_by_test_id("edit-effect").select_option("deny")
    row.get_by_test_id("rule-save").click()
    expect(row).to_have_attribute("data-effect", "deny")
    page.evaluate("document.fonts.ready")
    page.screenshot(path=artifacts / "safety-rules.png")

    row.get_by_test_id("rule-delete").click()
    expect(row).to_have_count(0)
    listed = page.request.get(
        f"{sparrow_server.base_url}/api/rules", params={"workspace": str(workspace)}
    ).json()["rules"]
    assert all(r["source"] == "default" for r in listed)


def test_the_dial_turns_with_the_keyboard_and_the_server_follows(
    supervised: Page, sparrow_server: SparrowServer, artifacts: Path
) -> None:
    page = supervised
    panel = open_safety(page)
    dial = panel.get_by_test_id("autonomy-dial")
    expect(dial).to_have_attribute("role", "slider")
    expect(dial).to_have_attribute("aria-valuetext", re.compile("Supervised"))
    start = float(dial.get_attribute("aria-valuenow") or "nan")
    assert start == safety(page, sparrow_server)["level"]

    dial.focus()
    page.keyboard.press("ArrowRight")
    expect(dial).to_have_attribute("aria-valuenow", f"{start + 0.01:.2f}")
    page.keyboard.press("PageUp")
    page.keyboard.press("PageUp")
    level = round(start + 0.21, 2)
    expect(dial).to_have_attribute("aria-valuenow", f"{level:.2f}")
    expect(dial).to_have_attribute("aria-valuetext", re.compile("Trusted"))
    # The server follows (debounced), and the mode follows the band.
    expect(panel.get_by_test_id("mode-switch").get_by_role("radio", name="Trusted")).to_be_checked()
    state = safety(page, sparrow_server)
    assert state["level"] == level and state["mode"] == "trusted" and state["band"] == "Trusted"
    expect(page.get_by_test_id("safety-summary")).to_have_text(f"Trusted · {level:.2f}")

    page.keyboard.press("End")
    expect(dial).to_have_attribute("aria-valuenow", "1.00")
    expect(dial).to_have_attribute("aria-valuetext", re.compile("Autonomous"))
    expect(
        panel.get_by_test_id("mode-switch").get_by_role("radio", name="Autonomous")
    ).to_be_checked()
    page.evaluate("document.fonts.ready")
    panel.screenshot(path=artifacts / "safety-dial.png")

    # Read-only overrides the dial: dimmed, with a note; the dial keeps its value.
    choose_mode(page, "Read-only")
    expect(dial).to_have_attribute("data-overridden", "true")
    expect(panel.get_by_test_id("dial-override")).to_contain_text("Read-only overrides the dial")
    assert safety(page, sparrow_server)["level"] == 1.0
    panel.screenshot(path=artifacts / "safety-dial-overridden.png")
    choose_mode(page, "Supervised")
    expect(dial).to_have_attribute("data-overridden", "false")
    expect(dial).to_have_attribute("aria-valuetext", re.compile("Supervised"))
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()


def test_emergency_stop_is_instant_and_says_what_it_stopped(
    supervised: Page, workspace: Path, sparrow_server: SparrowServer
) -> None:
    page = supervised
    start_run(page, workspace, "Wait for me, then be stopped.")
    run_id_of(page)
    expect(approval_card(page, "write_file")).to_be_visible(timeout=RUN_TIMEOUT_MS)

    page.get_by_test_id("emergency-stop").click()
    expect(page.get_by_test_id("emergency-status")).to_contain_text("1 run stopped")
    expect(page.get_by_test_id("safety-summary")).to_have_text("Stopped")
    expect(page.get_by_test_id("run-status")).not_to_have_text("running", timeout=RUN_TIMEOUT_MS)
    assert safety(page, sparrow_server)["mode"] == "emergency-stop"

    page.get_by_test_id("safety-resume").click()
    expect(page.get_by_test_id("safety-banner")).to_be_hidden()
    expect(page.get_by_test_id("safety-summary")).to_contain_text("Supervised")


def intersects(a: FloatRect | None, b: FloatRect | None) -> bool:
    assert a is not None and b is not None
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def test_the_emergency_stop_banner_takes_its_own_room_and_is_named_once(
    app: Page, sparrow_server: SparrowServer, artifacts: Path
) -> None:
    page = app
    expect(page.get_by_test_id("connection-status")).to_have_attribute("data-state", "open")
    try:
        page.get_by_test_id("emergency-stop").click()
        banner = page.get_by_test_id("safety-banner")
        expect(banner).to_be_visible()
        expect(page.get_by_test_id("emergency-stop")).to_have_attribute("aria-pressed", "true")
        banner_box = banner.bounding_box()
        for name, covered in {
            "workspace label": page.locator('label[for="workspace"]'),
            "workspace field": page.get_by_test_id("workspace-input"),
            "model label": page.locator('label[for="model"]'),
            "model field": page.get_by_test_id("model-select"),
        }.items():
            expect(covered).to_be_visible()
            assert not intersects(banner_box, covered.bounding_box()), f"it covers the {name}"
        # What the header shows, not what it hides (the closed Safety panel names the mode too).
        header = page.locator(".app-header").inner_text()
        assert header.count("Emergency stop") == 1, header
        page.evaluate("document.fonts.ready")
        page.screenshot(path=artifacts / "safety-emergency-stop.png")
    finally:
        answer = page.request.put(
            f"{sparrow_server.base_url}/api/safety", data={"mode": "autonomous"}
        )
        assert answer.ok, answer.text()
    page.reload()
    expect(page.get_by_test_id("safety-banner")).to_be_hidden()


def rule_rows(page: Page) -> list[dict[str, str]]:
    """The Rules view's table as the user sees it, row by row."""
    rows: list[dict[str, str]] = page.get_by_test_id("rule").evaluate_all(
        """rows => rows.map(row => ({
            id: row.dataset.ruleId, effect: row.dataset.effect,
            source: row.dataset.source, text: row.innerText,
        }))"""
    )
    return rows


def listed_rules(page: Page, server: SparrowServer, workspace: Path) -> list[dict[str, Any]]:
    answer = page.request.get(f"{server.base_url}/api/rules", params={"workspace": str(workspace)})
    assert answer.ok, answer.text()
    rules: list[dict[str, Any]] = answer.json()["rules"]
    return rules


def show_rules_of(page: Page, workspace: Path, count: int) -> None:
    """The Rules view of ``workspace``, once it lists its ``count`` workspace rules."""
    page.get_by_test_id("rules-tab").click()
    page.get_by_test_id("rules-workspace").fill(str(workspace))
    page.get_by_test_id("rules-load").click()
    mine = page.get_by_test_id("rules").locator('[data-testid="rule"][data-source="user"]')
    expect(mine.filter(has_text="workspace")).to_have_count(count)


def test_undo_puts_a_deleted_rule_back_as_it_was_in_its_place(
    app: Page, workspace: Path, sparrow_server: SparrowServer, artifacts: Path
) -> None:
    page = app
    made = []
    for effect, spec in [
        ("allow", "read_file(docs/**)"),
        ("allow", "write_file(notes.txt)"),
        ("deny", "run_shell(rm:*)"),
    ]:
        body = {"effect": effect, "spec": spec, "scope": "workspace", "workspace": str(workspace)}
        answer = page.request.post(f"{sparrow_server.base_url}/api/rules", data=body)
        assert answer.status == 201, answer.text()
        made.append(answer.json()["rule"])
    # The middle rule has been used: its hits and its last use come back too.
    call = {"tool": "write_file", "args": {"path": "notes.txt", "content": "hello\n"}}
    script = {"turns": [{"text": "Writing.", "tool_calls": [call]}, {"text": "Done."}]}
    open_scripted_run(page, sparrow_server, workspace, "Write a note.", script)
    expect(page.get_by_test_id("run-status")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)

    show_rules_of(page, workspace, 3)
    middle_id = made[1]["id"]
    middle = page.locator(f'[data-testid="rule"][data-rule-id="{middle_id}"]')
    expect(middle.get_by_test_id("rule-hits")).to_have_text("1")
    before_rows, before_listed = rule_rows(page), listed_rules(page, sparrow_server, workspace)

    middle.get_by_test_id("rule-delete").click()
    expect(middle).to_have_count(0)
    toast = page.get_by_test_id("rule-undo-toast")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("Rule deleted")
    expect(toast).to_contain_text("write_file(notes.txt)")
    assert middle_id not in [r["id"] for r in listed_rules(page, sparrow_server, workspace)]
    page.evaluate("document.fonts.ready")
    page.screenshot(path=artifacts / "rules-undo.png")

    toast.get_by_role("button", name="Undo").click()
    expect(middle).to_have_count(1)
    expect(toast).to_be_hidden()
    assert rule_rows(page) == before_rows
    assert listed_rules(page, sparrow_server, workspace) == before_listed


def test_without_undo_the_delete_stands_and_the_notice_goes(
    open_app: OpenApp, workspace: Path, sparrow_server: SparrowServer
) -> None:
    page = open_app()
    # The page's own clock, moved by hand: no test waits on the wall clock.
    page.clock.install()
    page.reload()
    body = {"effect": "ask", "spec": "run_shell(make:*)", "scope": "workspace"}
    answer = page.request.post(
        f"{sparrow_server.base_url}/api/rules", data={**body, "workspace": str(workspace)}
    )
    assert answer.status == 201, answer.text()
    rule_id = answer.json()["rule"]["id"]
    show_rules_of(page, workspace, 1)

    page.locator(f'[data-rule-id="{rule_id}"]').get_by_test_id("rule-delete").click()
    toast = page.get_by_test_id("rule-undo-toast")
    expect(toast).to_be_visible()
    page.clock.fast_forward(4_000)
    expect(toast).to_be_visible()
    page.clock.fast_forward(5_000)
    expect(toast).to_be_hidden()
    assert rule_id not in [r["id"] for r in listed_rules(page, sparrow_server, workspace)]


def test_trusted_runs_without_asking_and_says_so(
    supervised: Page, workspace: Path, artifacts: Path
) -> None:
    page = supervised
    choose_mode(page, "Trusted")
    close_safety(page)
    start_run(page, workspace, "Run trusted.")
    run_id_of(page)
    expect(page.get_by_test_id("run-status")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
    expect(page.get_by_test_id("approval-card")).to_have_count(0)
    write = tool_card(page, "write_file")
    expect(write.get_by_test_id("gate-decision")).to_have_attribute("data-decided-by", "autonomy")
    expect(write.get_by_test_id("gate-text")).to_have_text("allowed: Trusted · Mutating")
    notices = page.get_by_test_id("safety-notice")
    expect(notices.first).to_contain_text("write_file ran without asking")
    write.scroll_into_view_if_needed()
    page.evaluate("document.fonts.ready")
    page.screenshot(path=artifacts / "safety-trusted-run.png")


def test_hooks_and_a_failing_verify_command_show_in_the_transcript(
    app: Page, workspace: Path, sparrow_server: SparrowServer, artifacts: Path, tmp_path: Path
) -> None:
    """A blocking PreToolUse hook and a verify_command that fails once: the model
    is told both, and the transcript shows both (the shared server runs autonomous)."""
    # The hook blocks only writes under gen/: it reads the call on stdin.
    veto = tmp_path / "veto.sh"
    veto.write_text(
        "#!/bin/sh\nif grep -q '\"gen/' ; then\n"
        "  echo 'generated files are not edited by hand' >&2; exit 2\nfi\n"
    )
    veto.chmod(0o755)
    config = sparrow_server.home / "config" / "config.toml"
    before = config.read_text()
    (workspace / ".sparrow").mkdir()
    (workspace / ".sparrow" / "config.toml").write_text(
        '[workspace]\nverify_command = "test -f fixed.txt || (echo fixed.txt is missing; exit 1)"\n'
    )
    write = {"tool": "write_file", "args": {"path": "notes.txt", "content": "hello\n"}}
    generated = {"tool": "write_file", "args": {"path": "gen/out.txt", "content": "x"}}
    fix = {"tool": "write_file", "args": {"path": "fixed.txt", "content": "ok\n"}}
    script = {
        "turns": [
            {"text": "Writing.", "tool_calls": [write, generated]},
            {"text": "Done."},
            {"text": "The check failed; fixing.", "tool_calls": [fix]},
            {"text": "Done now."},
        ]
    }
    try:
        config.write_text(
            before + f'\n[[hooks.PreToolUse]]\nmatcher = "write_file"\ncommand = "{veto}"\n'
        )
        open_scripted_run(app, sparrow_server, workspace, "Hooks and verify.", script)
        expect(app.get_by_test_id("run-status")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
    finally:
        config.write_text(before)
    cards = app.get_by_test_id("transcript").locator(
        '[data-testid="tool-card"][data-tool="write_file"]'
    )
    expect(cards).to_have_count(3)
    expect(cards.nth(1).get_by_test_id("tool-output")).to_contain_text(
        "blocked by a PreToolUse hook: generated files are not edited by hand"
    )
    verifies = app.get_by_test_id("verify-result")
    expect(verifies).to_have_count(2)
    expect(verifies.nth(0)).to_have_attribute("data-ok", "false")
    expect(verifies.nth(0)).to_contain_text("fixed.txt is missing")
    expect(verifies.nth(1)).to_have_attribute("data-ok", "true")
    assert not (workspace / "gen" / "out.txt").exists()
    assert (workspace / "fixed.txt").is_file()
    app.set_viewport_size({"width": 1280, "height": 1000})
    cards.nth(1).evaluate("el => el.scrollIntoView({block: 'start'})")
    app.evaluate("document.fonts.ready")
    app.screenshot(path=artifacts / "safety-hooks-verify.png")
