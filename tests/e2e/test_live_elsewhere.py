"""A run started by ``sparrow run`` in another process, seen live in the app:
it joins the conversations list without a reload, its events show while it
runs, Cancel in the window reaches its terminal, one whose process is killed
ends as interrupted before anyone restarts anything, and a terminal's follow-up
of the finished session open in the window is followed there live."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.cli.test_cli import SPARROW
from tests.e2e.conftest import OpenApp, SparrowServer, autonomous_server
from tests.e2e.test_sessions import api, demo, open_session
from tests.runtime.foreign import Foreign

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparrowServer]:
    with autonomous_server(tmp_path_factory) as running:
        yield running



def waiting_script(tmp_path: Path, gate: Path) -> Path:
    """A run that writes a file, then waits in a shell step until ``gate`` exists."""
    # Bounded: a shell left behind by a killed run ends by itself.
    wait = f"for i in $(seq 900); do [ -e {gate} ] && break; sleep 0.1; done; echo released"
    write = {"tool": "write_file", "args": {"path": "plan.txt", "content": "1\n"}}
    turns = [
        {"text": "Writing the plan first.", "tool_calls": [write]},
        {
            "text": "Now I wait for the go-ahead.",
            "tool_calls": [{"tool": "run_shell", "args": {"command": wait}}],
        },
        {"text": "Released: all done from the terminal."},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    return script


def sparrow_run(
    server: SparrowServer, script: Path, workspace: Path, task: str
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [SPARROW, "run", "--script", str(script), "-w", str(workspace), "--json", task],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "SPARROW_HOME": str(server.home)},
    )


def open_row(page: Page, task: str) -> None:
    row = page.get_by_test_id("run-item").filter(has_text=task)
    expect(row).to_have_count(1, timeout=30_000)  # no reload: the list follows the server
    row.click()


def test_a_cli_run_shows_live_in_the_window(
    open_app: OpenApp, server: SparrowServer, workspace: Path, tmp_path: Path, artifacts: Path
) -> None:
    page = open_app()
    expect(page.get_by_test_id("connection-status")).to_be_attached()
    gate = tmp_path / "go"
    process = sparrow_run(server, waiting_script(tmp_path, gate), workspace, "terminal task one")
    try:
        open_row(page, "terminal task one")
        expect(page.get_by_test_id("run-status")).to_have_text("running", timeout=30_000)
        transcript = page.get_by_test_id("transcript")
        # Events that happened while the run still goes: it waits on the gate.
        expect(transcript).to_contain_text("Now I wait for the go-ahead.", timeout=30_000)
        expect(transcript).to_contain_text("plan.txt")
        note = page.get_by_test_id("run-elsewhere")
        expect(note).to_contain_text("sparrow run")
        expect(note).to_contain_text("answered at that terminal")
        assert process.poll() is None, "the run ended before its events were seen"
        page.screenshot(path=str(artifacts / "live-elsewhere-running.png"))
        gate.touch()
        expect(transcript).to_contain_text("Released: all done from the terminal.", timeout=30_000)
        expect(page.get_by_test_id("run-end")).to_have_attribute("data-status", "completed")
        expect(page.get_by_test_id("run-status")).to_have_text("completed")
        expect(note).to_be_hidden()
        assert process.wait(timeout=60) == 0
    finally:
        gate.touch()
        if process.poll() is None:
            process.kill()
            process.wait()


def test_cancel_in_the_window_stops_a_cli_run(
    open_app: OpenApp, server: SparrowServer, workspace: Path, tmp_path: Path
) -> None:
    page = open_app()
    gate = tmp_path / "go"
    process = sparrow_run(server, waiting_script(tmp_path, gate), workspace, "terminal task two")
    try:
        open_row(page, "terminal task two")
        expect(page.get_by_test_id("transcript")).to_contain_text(
            "Now I wait for the go-ahead.", timeout=30_000
        )
        page.get_by_test_id("cancel-button").click()
        end = page.get_by_test_id("run-end")
        expect(end).to_have_attribute("data-status", "cancelled", timeout=30_000)
        expect(end).to_contain_text("cancelled from the Sparrow app")
        assert process.wait(timeout=60) == 130
    finally:
        gate.touch()
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_cli_run_killed_ends_interrupted_in_the_window(
    open_app: OpenApp, server: SparrowServer, workspace: Path, tmp_path: Path, artifacts: Path
) -> None:
    page = open_app()
    gate = tmp_path / "go"
    process = sparrow_run(server, waiting_script(tmp_path, gate), workspace, "terminal task three")
    try:
        open_row(page, "terminal task three")
        expect(page.get_by_test_id("transcript")).to_contain_text(
            "Now I wait for the go-ahead.", timeout=30_000
        )
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
        gate.touch()  # the shell step it left behind
    end = page.get_by_test_id("run-end")
    expect(end).to_have_attribute("data-status", "interrupted", timeout=30_000)
    expect(end).to_contain_text("ended before the run finished")
    expect(page.get_by_test_id("run-status")).to_have_text("interrupted")
    row = page.get_by_test_id("run-item").filter(has_text="terminal task three")
    expect(row.get_by_test_id("run-item-status")).to_have_attribute("data-status", "interrupted")
    page.screenshot(path=str(artifacts / "live-elsewhere-interrupted.png"))


def test_a_terminal_runs_question_shows_with_where_to_answer_it(
    open_app: OpenApp, server: SparrowServer, artifacts: Path
) -> None:
    page = open_app()
    far = Foreign("r-asks-elsewhere", surface="cli", home=server.home)
    try:
        event = {"run_id": "r-asks-elsewhere", "ts": 1.0}
        far.write(
            json.dumps(
                event
                | {
                    "type": "run_started",
                    "seq": 1,
                    "task": "terminal task four",
                    "workspace": "/w",
                    "model": "script",
                    "session_id": "s",
                }
            )
            + "\n"
        )
        far.write(
            json.dumps(
                event
                | {
                    "type": "tool_requested",
                    "seq": 2,
                    "turn": 1,
                    "call_id": "c1",
                    "tool": "write_file",
                    "args": {"path": "x.txt"},
                    "risk": "Mutating",
                }
            )
            + "\n"
        )
        far.write(
            json.dumps(
                event
                | {
                    "type": "approval_requested",
                    "seq": 3,
                    "turn": 1,
                    "call_id": "c1",
                    "tool": "write_file",
                    "args": {"path": "x.txt"},
                    "risk": "Mutating",
                    "reason": "writes need approval",
                    "suggested_rule": "write_file(x.txt)",
                    "timeout_seconds": 600.0,
                    "expires_at": time.time() + 600,
                }
            )
            + "\n"
        )
        open_row(page, "terminal task four")
        card = page.get_by_test_id("approval-card")
        expect(card).to_be_visible(timeout=30_000)
        expect(card.get_by_test_id("approval-elsewhere")).to_contain_text(
            "answered at that terminal"
        )
        expect(card.get_by_test_id("approve-once")).to_be_disabled()
        expect(card.get_by_test_id("deny")).to_be_disabled()
        expect(page.get_by_test_id("cancel-button")).to_be_enabled()
        card.screenshot(path=str(artifacts / "live-elsewhere-approval.png"))
    finally:
        far.close()


def test_a_terminal_follow_up_of_the_open_finished_session_shows_live(
    open_app: OpenApp, server: SparrowServer, tmp_path: Path, artifacts: Path
) -> None:
    """A finished session open in the window (a replay) follows a `sparrow run
    --continue` of it started in a terminal: the replay gives way to the new
    run, drawn live, without a reload."""
    page = open_app()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first = demo(page, server, "Finished before the terminal", workspace=workspace)
    open_session(page, first["id"])
    expect(page.get_by_test_id("run-status")).to_have_text("completed")
    page.evaluate("window.notReloaded = true")
    gate = tmp_path / "go"
    process = subprocess.Popen(
        [SPARROW, "run", "--continue", first["id"], "--script",
         str(waiting_script(tmp_path, gate)), "--json", "Carry on from the terminal"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "SPARROW_HOME": str(server.home)},
    )
    try:
        expect(page.get_by_test_id("replay-bar")).to_be_hidden(timeout=30_000)
        entries = page.get_by_test_id("task-entry")
        expect(entries).to_have_count(2)
        expect(entries.last).to_contain_text("Carry on from the terminal")
        transcript = page.get_by_test_id("transcript")
        # Drawn while it goes: the run waits on the gate.
        expect(transcript).to_contain_text("Now I wait for the go-ahead.", timeout=30_000)
        expect(page.get_by_test_id("run-status")).to_have_text("running")
        expect(page.get_by_test_id("run-elsewhere")).to_contain_text("sparrow run")
        assert process.poll() is None, "the run ended before its events were seen"
        page.screenshot(path=str(artifacts / "live-elsewhere-follow-up.png"))
        gate.touch()
        expect(page.get_by_test_id("run-end")).to_have_count(2, timeout=30_000)
        expect(page.get_by_test_id("run-end").last).to_have_attribute("data-status", "completed")
        expect(page.get_by_test_id("run-status")).to_have_text("completed")
        assert process.wait(timeout=60) == 0
        runs = api(page, server, "GET", f"/api/sessions/{first['session_id']}")["runs"]
        assert [r["task"] for r in runs] == [
            "Finished before the terminal", "Carry on from the terminal"
        ]
        # The address follows the conversation's newest run; the page never reloaded.
        assert page.url.endswith(f"#run={runs[1]['id']}")
        assert page.evaluate("window.notReloaded") is True
    finally:
        gate.touch()
        if process.poll() is None:
            process.kill()
            process.wait()
