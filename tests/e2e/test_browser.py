"""The web UI in headless Chromium against the real server (see conftest.py):
a demo run streams, shows its tool cards with their risk and completes; the
server's errors are shown where the user typed; a transcript is rebuilt from
history after a reload or when an old run is opened."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Locator, Page, expect

from server.providers.base import ToolResultMessage
from server.providers.demo import DEMO_FILE, closing_words, demo_turns

if TYPE_CHECKING:
    from tests.e2e.conftest import OpenApp, SparrowServer

DEMO_TOOLS = ["list_dir", "write_file", "read_file", "run_shell"]
DEMO_RISKS = {
    "list_dir": "ReadOnly",
    "write_file": "Mutating",
    "read_file": "ReadOnly",
    "run_shell": "Exec",
}
RUN_TIMEOUT_MS = 30_000


def slow_workspace(folder: Path, delay: float = 0.2) -> Path:
    """A workspace whose own settings make the demo stream slowly enough to act mid-run."""
    (folder / ".sparrow").mkdir()
    (folder / ".sparrow" / "config.toml").write_text(f"[demo]\nchunk_delay_seconds = {delay}\n")
    return folder


def start_run(page: Page, workspace: Path | str, task: str) -> None:
    page.get_by_test_id("workspace-input").fill(str(workspace))
    page.get_by_test_id("prompt-input").fill(task)
    page.get_by_test_id("run-button").click()


def run_id_of(page: Page) -> str:
    expect(page).to_have_url(re.compile(r"#run=r-"))
    return page.url.split("#run=", 1)[1]


def open_scripted_run(
    page: Page, server: SparrowServer, workspace: Path, task: str, script: dict[str, Any]
) -> str:
    """Start a run of a scripted model through the API and open it; its id."""
    answer = page.request.post(
        f"{server.base_url}/api/runs",
        data={"workspace": str(workspace), "task": task, "model": "script", "script": script},
    )
    assert answer.status == 201, answer.text()
    run_id: str = answer.json()["run"]["id"]
    page.goto(f"{server.base_url}/#run={run_id}")
    return run_id


def tool_card(page: Page, tool: str) -> Locator:
    return page.get_by_test_id("transcript").locator(
        f'[data-testid="tool-card"][data-tool="{tool}"]'
    )


def expected_messages() -> list[str]:
    # Inline `code` is drawn as <code>: its backticks are not part of the text.
    steps = demo_turns()
    done = [ToolResultMessage(f"c{i}", call.tool, "", True)
            for i, step in enumerate(steps) for call in step.tool_calls]
    texts = [turn.text for turn in steps] + [closing_words(done)]
    return [text.replace("`", "") for text in texts]


def transcript_shape(page: Page) -> dict[str, object]:
    """What a rebuilt transcript must reproduce exactly (duplicates included)."""
    transcript = page.get_by_test_id("transcript")
    cards = transcript.get_by_test_id("tool-card")
    return {
        "tools": cards.evaluate_all("cards => cards.map(c => c.dataset.tool)"),
        "risks": transcript.get_by_test_id("risk-badge").all_text_contents(),
        "states": cards.evaluate_all("cards => cards.map(c => c.dataset.state)"),
        "messages": transcript.locator(".message-text").all_text_contents(),
        "tasks": transcript.get_by_test_id("task-entry").count(),
        "ends": transcript.get_by_test_id("run-end").all_text_contents(),
    }


def expect_complete_demo(page: Page) -> None:
    expect(page.get_by_test_id("run-status")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
    expect(page.get_by_test_id("tool-card")).to_have_count(len(DEMO_TOOLS))
    expect(page.get_by_test_id("run-end")).to_have_count(1)
    shape = transcript_shape(page)
    assert shape["tools"] == DEMO_TOOLS
    assert shape["risks"] == [DEMO_RISKS[tool] for tool in DEMO_TOOLS]
    assert shape["states"] == ["ok"] * len(DEMO_TOOLS)
    assert shape["messages"] == expected_messages()
    assert shape["tasks"] == 1


@pytest.mark.e2e
def test_demo_run_streams_shows_tool_cards_and_completes(
    app: Page, workspace: Path, open_app: OpenApp, sparrow_server: SparrowServer, artifacts: Path
) -> None:
    expect(app.get_by_test_id("connection-status")).to_have_attribute("data-state", "open")
    start_run(app, workspace, "Show me what a Sparrow run looks like.")
    run_id = run_id_of(app)

    transcript = app.get_by_test_id("transcript")
    expect(transcript.get_by_test_id("task-entry")).to_contain_text(
        "Show me what a Sparrow run looks like."
    )
    # The context meter, from the first context_updated on: it moves with the run.
    bar = app.get_by_test_id("context-bar")
    expect(bar).to_be_visible()
    seen = [int(bar.get_attribute("data-tokens") or "0")]
    expect(transcript.get_by_test_id("assistant-message").first).to_contain_text(
        "I'll start by looking at what is in the workspace."
    )
    write = tool_card(app, "write_file")
    expect(write.locator(".risk-badge")).to_have_attribute("data-risk", "Mutating")
    expect(write.locator(".risk-badge")).to_have_text("Mutating")
    expect(write.get_by_test_id("tool-args")).to_contain_text(DEMO_FILE)
    expect(write.get_by_test_id("result-marker")).to_have_text("ok")
    shell = tool_card(app, "run_shell")
    expect(shell.locator(".risk-badge")).to_have_attribute("data-risk", "Exec")
    expect(shell.get_by_test_id("tool-output")).to_contain_text(DEMO_FILE)

    expect_complete_demo(app)
    # Every value shown is a word, never a JavaScript placeholder.
    shown = transcript.inner_text()
    assert "null" not in shown and "undefined" not in shown, shown
    expect(tool_card(app, "read_file").get_by_test_id("gate-text")).to_have_text(
        "allowed: Autonomous · ReadOnly"
    )
    expect(app.get_by_test_id("cancel-button")).to_be_hidden()
    expect(app.get_by_test_id("run-reason")).to_be_hidden()
    expect(app.get_by_test_id("token-usage")).to_contain_text("context")
    seen.append(int(bar.get_attribute("data-tokens") or "0"))
    assert seen[-1] > seen[0], seen
    expect(bar).to_have_attribute("data-measured", "true")  # the demo reports usage
    expect(app.get_by_test_id("context-label")).to_contain_text("of 200k")
    expect(app.get_by_test_id("context-compact-at")).to_be_visible()
    assert (workspace / DEMO_FILE).is_file(), "the run's write_file did not reach the disk"
    item = app.locator(f'[data-testid="run-item"][data-run-id="{run_id}"]')
    expect(item).to_have_attribute("aria-current", "true")
    expect(item).to_have_attribute("data-status", "completed")
    # The form is ready for the next task; the workspace is remembered.
    expect(app.get_by_test_id("prompt-input")).to_have_value("")
    expect(app.get_by_test_id("workspace-input")).to_have_value(str(workspace))
    # The picture: a taller window, the Mutating and Exec cards in view.
    app.set_viewport_size({"width": 1280, "height": 1000})
    show_cards = "el => el.scrollIntoView({block: 'start'})"
    write.evaluate(show_cards)
    app.evaluate("document.fonts.ready")
    app.screenshot(path=artifacts / "browser-demo-run.png")

    light = open_app(color_scheme="light")
    light.set_viewport_size({"width": 1280, "height": 1000})
    light.goto(f"{sparrow_server.base_url}/#run={run_id}")
    expect_complete_demo(light)
    tool_card(light, "write_file").evaluate(show_cards)
    light.evaluate("document.fonts.ready")
    light.screenshot(path=artifacts / "browser-demo-run-light.png")


@pytest.mark.e2e
def test_unknown_workspace_shows_the_server_error_and_keeps_the_task(
    app: Page, tmp_path: Path, workspace: Path, sparrow_server: SparrowServer
) -> None:
    missing = tmp_path / "no-such-folder"
    task = "This task must survive the error.\nIncluding its second line."
    answer = app.context.request.post(
        f"{sparrow_server.base_url}/api/runs",
        data={"workspace": str(missing), "task": task, "model": "demo"},
    )
    assert answer.status == 400
    server_message = answer.json()["error"]
    assert str(missing) in server_message

    start_run(app, missing, task)
    error = app.get_by_test_id("form-error")
    expect(error).to_be_visible()
    expect(error).to_have_text(server_message)
    expect(app.get_by_test_id("prompt-input")).to_have_value(task)
    expect(app.get_by_test_id("workspace-input")).to_have_attribute("aria-invalid", "true")
    expect(app.get_by_test_id("run-button")).to_be_enabled()
    expect(app).not_to_have_url(re.compile("#run="))

    # The server still serves, and the same form starts a run once the folder is right.
    health = app.context.request.get(f"{sparrow_server.base_url}/api/health")
    assert health.ok and health.json()["ok"] is True
    app.get_by_test_id("workspace-input").fill(str(workspace))
    app.get_by_test_id("prompt-input").press("Control+Enter")
    expect(error).to_be_hidden()
    run_id_of(app)
    expect(app.get_by_test_id("run-status")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
    expect(app.get_by_test_id("prompt-input")).to_have_value("")


@pytest.mark.e2e
def test_reload_mid_run_rebuilds_the_transcript_from_history(app: Page, workspace: Path) -> None:
    start_run(app, slow_workspace(workspace), "Take your time.")
    run_id = run_id_of(app)
    expect(tool_card(app, "write_file")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(app.get_by_test_id("run-status")).to_have_text("running")

    app.reload()
    expect(app).to_have_url(re.compile(f"#run={run_id}$"))
    # Mid-run: the history so far is back, and the rest keeps streaming in.
    expect(app.get_by_test_id("run-status")).to_have_text("running")
    expect(app.get_by_test_id("task-entry")).to_contain_text("Take your time.")
    expect(tool_card(app, "list_dir")).to_have_attribute("data-state", "ok")
    expect(tool_card(app, "write_file").locator(".risk-badge")).to_have_text("Mutating")
    expect_complete_demo(app)


@pytest.mark.e2e
def test_a_finished_run_opened_from_the_list_shows_the_same_transcript(
    app: Page, workspace: Path
) -> None:
    start_run(app, workspace, "Run once, then look back.")
    run_id = run_id_of(app)
    expect_complete_demo(app)
    live = transcript_shape(app)

    app.get_by_test_id("new-run-button").click()
    expect(app.get_by_test_id("run-placeholder")).to_be_visible()
    expect(app.get_by_test_id("tool-card")).to_have_count(0)

    app.locator(f'[data-testid="run-item"][data-run-id="{run_id}"]').click()
    expect(app).to_have_url(re.compile(f"#run={run_id}$"))
    expect_complete_demo(app)
    assert transcript_shape(app) == live


@pytest.mark.e2e
def test_cancel_stops_a_running_run(app: Page, workspace: Path) -> None:
    start_run(app, slow_workspace(workspace, delay=0.3), "Start, then get cancelled.")
    run_id_of(app)
    expect(app.get_by_test_id("tool-card").first).to_be_visible(timeout=RUN_TIMEOUT_MS)

    # A reader who scrolls up is not dragged down by new output, but is offered a way back.
    transcript = app.get_by_test_id("transcript")
    transcript.evaluate("el => { el.style.height = '120px'; }")  # scrollable already
    transcript.hover()
    app.mouse.wheel(0, -10_000)
    app.wait_for_function("document.getElementById('transcript').scrollTop === 0")
    jump = app.get_by_test_id("jump-latest")
    expect(jump).to_be_visible()
    assert transcript.evaluate("el => el.scrollTop") == 0
    jump.click()
    expect(jump).to_be_hidden()
    assert transcript.evaluate("el => el.scrollHeight - el.scrollTop - el.clientHeight") < 50
    transcript.evaluate("el => { el.style.height = ''; }")

    app.get_by_test_id("cancel-button").click()
    status = app.get_by_test_id("run-status")
    expect(status).to_have_text("cancelled", timeout=RUN_TIMEOUT_MS)
    expect(app.get_by_test_id("run-reason")).to_be_visible()
    expect(app.get_by_test_id("run-reason")).not_to_be_empty()
    expect(app.get_by_test_id("cancel-button")).to_be_hidden()
    expect(app.get_by_test_id("run-end")).to_contain_text("Cancelled")


@pytest.mark.e2e
def test_the_runs_list_follows_runs_started_elsewhere(
    app: Page, workspace: Path, sparrow_server: SparrowServer
) -> None:
    expect(app.get_by_test_id("connection-status")).to_have_attribute("data-state", "open")
    answer = app.context.request.post(
        f"{sparrow_server.base_url}/api/runs",
        data={
            "workspace": str(workspace),
            "task": "Started from another surface.",
            "model": "demo",
        },
    )
    assert answer.status == 201, answer.text()
    run_id = answer.json()["run"]["id"]
    item = app.locator(f'[data-testid="run-item"][data-run-id="{run_id}"]')
    expect(item).to_contain_text("Started from another surface.")
    expect(item).to_have_attribute("data-status", "completed", timeout=RUN_TIMEOUT_MS)
    expect(app.get_by_test_id("run-placeholder")).to_be_visible()


@pytest.mark.e2e
def test_long_values_fold_and_failed_calls_are_marked(
    app: Page, workspace: Path, sparrow_server: SparrowServer, artifacts: Path
) -> None:
    (workspace / ".sparrow").mkdir()
    (workspace / ".sparrow" / "config.toml").write_text("[files]\nread_limit_bytes = 1500\n")
    (workspace / "big.txt").write_text(
        "".join(f"line {n}: some text to read\n" for n in range(200))
    )
    long_note = "".join(f"- point {n}\n" for n in range(40))
    script = {
        "turns": [
            {
                "text": "Reading a long file.",
                "tool_calls": [{"tool": "read_file", "args": {"path": "big.txt"}}],
            },
            {
                "text": "Writing a long note.",
                "tool_calls": [
                    {"tool": "write_file", "args": {"path": "note.md", "content": long_note}}
                ],
            },
            {
                "text": "This one fails.",
                "tool_calls": [{"tool": "run_shell", "args": {"command": "ls no-such-file"}}],
            },
            {"text": "Done."},
        ]
    }
    open_scripted_run(app, sparrow_server, workspace, "Fold what is long.", script)
    expect(app.get_by_test_id("run-end")).to_be_visible(timeout=RUN_TIMEOUT_MS)

    read = tool_card(app, "read_file")
    expect(read.get_by_test_id("truncated-note")).to_be_visible()
    folded_output = read.get_by_test_id("tool-output-fold")
    expect(folded_output).not_to_have_attribute("open", "")
    expect(read.get_by_test_id("tool-output")).to_be_hidden()
    folded_output.locator("summary").click()
    expect(read.get_by_test_id("tool-output")).to_contain_text("line 0: some text to read")

    write = tool_card(app, "write_file")
    expect(write.get_by_test_id("tool-arg-block-fold")).to_contain_text("40 lines")
    expect(write.get_by_test_id("tool-arg-block")).to_be_hidden()
    expect(write.get_by_test_id("result-marker")).to_have_text("ok")

    shell = tool_card(app, "run_shell")
    expect(shell).to_have_attribute("data-state", "failed")
    expect(shell.get_by_test_id("result-marker")).to_have_text("failed")
    expect(shell.get_by_test_id("tool-output")).to_contain_text("no-such-file")
    app.screenshot(path=artifacts / "browser-folding.png")


# Keeps every WebSocket the page opens, so that a test can drop them.
TRACK_SOCKETS = """
(() => {
  const Native = window.WebSocket;
  window.__sockets = [];
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      window.__sockets.push(this);
    }
  };
})();
"""


@pytest.mark.e2e
def test_a_dropped_connection_reconnects_and_rebuilds_without_duplicates(
    app: Page, workspace: Path
) -> None:
    app.add_init_script(TRACK_SOCKETS)
    app.reload()
    start_run(app, slow_workspace(workspace, delay=0.1), "Survive a dropped connection.")
    run_id_of(app)
    # Mid-stream of the second turn's text, every connection drops.
    expect(app.get_by_test_id("assistant-message").nth(1)).to_contain_text("Now I'll")
    expect(app.get_by_test_id("run-status")).to_have_text("running")
    dropped = app.evaluate("window.__sockets.filter(s => s.readyState === 1).length")
    assert dropped == 2, "expected the all-runs socket and the run's socket"
    app.evaluate("window.__sockets.forEach(s => s.close())")
    # Both reconnect (with backoff) and subscribe again: the run is replayed from the start.
    app.wait_for_function("window.__sockets.filter(s => s.readyState === 1).length === 2")
    expect(app.get_by_test_id("connection-status")).to_have_attribute("data-state", "open")
    expect_complete_demo(app)
