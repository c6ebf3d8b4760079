"""Conversations, models and keys in the browser, against the real server
(`sparrow-desktop --headless`) and a local server that speaks the vendors'
wire format (tests/fakes): the composer, the model and why, thinking, tool
arguments as they stream, a discarded turn, the Request view, the welcome
screen and Settings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from server.core import credentials
from tests.conftest import AUTONOMOUS_CONFIG, require
from tests.e2e.conftest import (
    VIEWPORT,
    OpenApp,
    SparrowServer,
    autonomous_server,
    launch_server,
    page_opener,
)
from tests.fakes.script import Call, Drop, Reply, Usage
from tests.fakes.vendors import FakeVendor

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor() as fake:
        yield fake


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, vendor: FakeVendor) -> Iterator[SparrowServer]:
    """A server with an endpoint of its own, `fake`, at the fake vendor."""
    endpoint = (
        f'[providers.fake]\nbase_url = "{vendor.base_url}/v1"\nkind = "openai-chat"\n'
        + 'label = "Fake vendor"\n'
    )
    with autonomous_server(tmp_path_factory, endpoint) as running:
        yield running


def start(page: Page, workspace: Path, task: str, model: str) -> None:
    page.get_by_test_id("workspace-input").fill(str(workspace))
    page.get_by_test_id("model-select").select_option(model)
    page.get_by_test_id("prompt-input").fill(task)
    page.get_by_test_id("run-button").click()


def ends(page: Page, count: int) -> None:
    expect(page.get_by_test_id("run-end")).to_have_count(count, timeout=30_000)


def test_a_conversation_continued_twice_sends_the_whole_history(
    open_app: OpenApp, vendor: FakeVendor, workspace: Path, artifacts: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    vendor.script(
        Reply(text="Let me read it.", calls=(Call("read_file", {"path": "notes.txt"}),)),
        Reply(text="It says: remember the milk.", usage=Usage(input=300, cache_read=0, output=9)),
        Reply(text="Yes, just one line."),
        Reply(text="You asked about notes.txt, twice."),
    )
    page = open_app()
    start(page, workspace, "What is in notes.txt?", "fake:fake-model")
    ends(page, 1)
    header = page.get_by_test_id("run-model")
    expect(header).to_have_text("fake:fake-model")
    expect(page.get_by_test_id("run-model-reason")).to_have_text("chosen for this run")
    expect(page.get_by_test_id("run-cost")).to_have_text("cost unknown")

    composer = page.get_by_test_id("composer-input")
    composer.fill("Only one line?")
    composer.press("Shift+Enter")  # a new line, not a send
    composer.type("Be sure.")
    expect(composer).to_have_value("Only one line?\nBe sure.")
    composer.press("Enter")
    ends(page, 2)
    expect(composer).to_have_value("")
    composer.fill("What did I ask?")
    page.get_by_test_id("composer-send").click()
    ends(page, 3)

    tasks = page.get_by_test_id("task-entry")
    expect(tasks).to_have_count(3)
    expect(tasks.nth(1)).to_contain_text("Only one line?\nBe sure.")
    answers = page.get_by_test_id("assistant-message")
    expect(answers.last).to_contain_text("You asked about notes.txt, twice.")
    # One conversation in the sidebar, however many exchanges.
    expect(page.get_by_test_id("run-item")).to_have_count(1)
    expect(page.get_by_test_id("run-item-count")).to_have_text("3 exchanges")

    # The last request the vendor received carried the whole history.
    last = vendor.last("/v1/chat/completions").body["messages"]
    sent = [m for m in last if m["role"] != "system"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user",
                                          "assistant", "user"]
    assert sent[0]["content"] == "What is in notes.txt?"
    assert "remember the milk" in str(sent[2]["content"])
    assert sent[-1]["content"] == "What did I ask?"
    page.screenshot(path=str(artifacts / "conversation-dark.png"))

    # A reload shows the same conversation.
    page.reload()
    expect(page.get_by_test_id("task-entry")).to_have_count(3)
    expect(page.get_by_test_id("run-end")).to_have_count(3)

    # The Request view of the last run's turn: the system prompt and the messages sent.
    page.get_by_test_id("assistant-message").last.hover()
    page.get_by_test_id("show-request").last.click()
    dialog = page.get_by_test_id("request-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_test_id("request-summary")).to_contain_text("7 messages")
    expect(dialog.get_by_test_id("request-message")).to_have_count(7)
    dialog.locator("summary", has_text="Show the system prompt").click()
    expect(dialog.get_by_test_id("request-system")).to_contain_text("You are Sparrow")
    page.screenshot(path=str(artifacts / "request-dialog-dark.png"))
    dialog.get_by_test_id("request-close").click()


def test_thinking_and_tool_arguments_stream_live(
    open_app: OpenApp, vendor: FakeVendor, workspace: Path, artifacts: Path
) -> None:
    """A slow stream: the card shows the arguments as they arrive, before the call."""
    vendor.script(
        Reply(text="Writing the file now.",
              calls=(Call("write_file", {"path": "a.txt", "content": "x" * 40}),), delay=0.25),
        Reply(text="Done."),
    )
    page = open_app()
    start(page, workspace, "write a.txt", "fake:fake-model")
    streaming = page.get_by_test_id("args-stream")
    expect(streaming).to_be_visible(timeout=20_000)
    expect(page.get_by_test_id("tool-state").first).to_contain_text("receiving arguments")
    page.screenshot(path=str(artifacts / "tool-card-streaming-dark.png"))
    ends(page, 1)
    card = page.locator('[data-testid="tool-card"][data-tool="write_file"]')
    expect(card.get_by_test_id("risk-badge")).to_have_text("Mutating")
    expect(card.get_by_test_id("tool-args")).to_contain_text("a.txt")
    expect(page.get_by_test_id("args-stream")).to_have_count(0)
    assert (workspace / "a.txt").read_text() == "x" * 40


def test_a_dropped_stream_is_marked_discarded_and_the_turn_asked_again(
    open_app: OpenApp, vendor: FakeVendor, workspace: Path
) -> None:
    vendor.script(
        Drop(after=5, reply=Reply(text="This answer will be cut off in the middle")),
        Reply(text="The whole answer, this time."),
    )
    page = open_app()
    start(page, workspace, "answer me", "fake:fake-model")
    ends(page, 1)
    note = page.get_by_test_id("discarded-note")
    expect(note).to_contain_text("Discarded: the connection to Fake vendor dropped mid-response")
    discarded = page.locator('[data-testid="assistant-message"][data-discarded="true"]')
    expect(discarded).to_have_count(1)
    expect(page.get_by_test_id("assistant-message").last).to_contain_text(
        "The whole answer, this time."
    )


def test_thinking_is_folded_above_the_answer(open_app: OpenApp, server: SparrowServer,
                                             workspace: Path) -> None:
    page = open_app()
    script = {"turns": [{"thinking": "The user wants a greeting.", "text": "Hello!"}]}
    answer = page.request.post(f"{server.base_url}/api/runs", data={
        "workspace": str(workspace), "task": "greet", "model": "script", "script": script})
    page.goto(f"{server.base_url}/#run={answer.json()['run']['id']}")
    ends(page, 1)
    fold = page.get_by_test_id("thinking")
    expect(fold).to_have_count(1)
    expect(fold.get_by_test_id("thinking-text")).not_to_be_visible()
    fold.locator("summary").click()
    expect(fold.get_by_test_id("thinking-text")).to_have_text("The user wants a greeting.")


def test_the_first_run_screen_and_the_demo(
    browser: Browser, tmp_path: Path, workspace: Path, artifacts: Path
) -> None:
    home = tmp_path / "fresh-home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(AUTONOMOUS_CONFIG)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "c"), "CODEX_HOME": str(tmp_path / "x")}
    with launch_server(home, env) as fresh, page_opener(browser, fresh) as open_page:
        page = open_page("light")
        welcome = page.get_by_test_id("welcome")
        expect(welcome).to_be_visible(timeout=20_000)
        expect(page.get_by_test_id("welcome-local")).to_contain_text("ollama serve")
        page.screenshot(path=str(artifacts / "welcome-light.png"))
        page.get_by_test_id("welcome-try-demo").click()
        expect(page.get_by_test_id("model-select")).to_have_value("demo")
        page.get_by_test_id("workspace-input").fill(str(workspace))
        page.get_by_test_id("run-button").click()
        ends(page, 1)
        expect(page.get_by_test_id("run-model")).to_have_text("demo")
        expect(page.get_by_test_id("run-cost")).to_have_text("cost unknown")
        expect(welcome).to_be_hidden()


def test_the_demo_chosen_while_the_model_list_loads_stays_chosen(
    browser: Browser, tmp_path: Path, vendor: FakeVendor
) -> None:
    """The list is asked for once the page shows: Try the demo can come first.
    A list that comes later (with a real model, so Auto would be the default)
    does not undo it."""
    home = tmp_path / "fresh-home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(
        AUTONOMOUS_CONFIG
        + f'[providers.fake]\nbase_url = "{vendor.base_url}/v1"\nkind = "openai-chat"\n'
    )
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "c"), "CODEX_HOME": str(tmp_path / "x")}
    held: list[Route] = []
    with launch_server(home, env) as fresh:
        context = browser.new_context(viewport=VIEWPORT)
        try:
            page = context.new_page()
            page.route("**/api/models*", lambda route: held.append(route))
            page.goto(fresh.launch_url)
            try_demo = page.get_by_test_id("welcome-try-demo")
            expect(try_demo).to_be_visible(timeout=20_000)
            for _ in range(100):
                if held:
                    break
                page.wait_for_timeout(100)
            assert held, "the page never asked for the models"
            try_demo.click()
            select = page.get_by_test_id("model-select")
            expect(select).to_have_value("demo")
            held[0].continue_()
            expect(select.locator("option[value='fake:fake-model']")).to_be_attached(
                timeout=20_000
            )
            expect(select).to_have_value("demo")
        finally:
            context.close()


def test_settings_keep_a_key_in_the_keyring_and_show_only_its_tail(
    open_app: OpenApp, artifacts: Path
) -> None:
    require("a Secret Service (run the tests through scripts/test-session.sh)",
            credentials.keyring_status().ok)
    key = "sk-ant-api03-settingsPAGEkey0123456789abcdWXYZ"
    page = open_app()
    page.get_by_test_id("settings-tab").click()
    anthropic = page.locator('[data-testid="provider"][data-provider="anthropic"]')
    expect(anthropic.get_by_test_id("provider-key")).to_have_text("No key")
    anthropic.get_by_test_id("provider-key-set").click()
    anthropic.get_by_test_id("provider-key-input").fill(key)
    anthropic.get_by_test_id("provider-key-save").click()
    anthropic = page.locator('[data-testid="provider"][data-provider="anthropic"]')
    try:
        expect(anthropic.get_by_test_id("provider-key")).to_have_text(
            "Key in the keyring …WXYZ", timeout=20_000
        )
        assert key not in page.content()
        page.screenshot(path=str(artifacts / "settings-dark.png"), full_page=True)
        # The default model and a route, kept by the server.
        fake = page.locator('[data-testid="provider"][data-provider="fake"]')
        expect(fake.get_by_test_id("provider-status")).to_contain_text("answers")
        page.get_by_test_id("default-model").select_option("fake:fake-model")
        expect(page.get_by_test_id("settings-saved")).to_have_text("Saved.")
        models = page.request.get(page.url.split("#")[0] + "api/models").json()
        assert models["default"] == "fake:fake-model"
        assert key not in json.dumps(models)
        anthropic.get_by_test_id("provider-key-remove").click()
        expect(anthropic.get_by_test_id("provider-key")).to_have_text("No key")
    finally:
        credentials.remove_key("anthropic")
        page.request.put(page.url.split("#")[0] + "api/preferences", data={"default_model": None})


def test_the_meter_moves_and_a_compaction_shows_as_a_fold(
    open_app: OpenApp, vendor: FakeVendor, workspace: Path, artifacts: Path
) -> None:
    """A run scripted to pass the workspace's compaction size: the context
    bar follows every change, the model writes the summary of the middle, a
    fold in the transcript says so, and the next request is the compacted one."""
    (workspace / ".sparrow").mkdir()
    (workspace / ".sparrow" / "config.toml").write_text("[context]\ncompact_chars = 3000\n")
    for name in "abcd":
        (workspace / f"{name}.txt").write_text(f"{name} " * 600)
    vendor.script(
        *[Reply(text=f"Reading {name}.", calls=(Call("read_file", {"path": f"{name}.txt"}),))
          for name in "abcd"],
        Reply(text="SUMMARY: the agent read a.txt and b.txt; both are filler."),
        Reply(text="All four files read."),
    )
    page = open_app()
    start(page, workspace, "Read the four files.", "fake:fake-model")
    bar = page.get_by_test_id("context-bar")
    expect(bar).to_be_visible()
    first = int(bar.get_attribute("data-tokens") or "0")
    ends(page, 1)
    fold = page.get_by_test_id("compaction")
    expect(fold).to_have_count(1)
    expect(fold).to_contain_text("summarised by fake:fake-model")
    expect(fold.get_by_test_id("compaction-handoff")).to_contain_text(".sparrow/handoff/")
    fold.locator("summary").click()
    expect(fold).to_contain_text("SUMMARY: the agent read a.txt")
    last = int(bar.get_attribute("data-tokens") or "0")
    assert last != first  # it moved with the run
    expect(page.get_by_test_id("context-label")).to_contain_text("window unknown")
    page.screenshot(path=artifacts / "conversation-compaction.png")
    expect(page.get_by_test_id("tool-card")).to_have_count(4)  # one card per call
    # The request after the compaction: the first message with the summary, no middle.
    sent = vendor.last("/v1/chat/completions").body
    users = [m for m in sent["messages"] if m["role"] == "user"]
    assert users[0]["content"].startswith("Read the four files.")
    assert "SUMMARY: the agent read a.txt" in json.dumps(users[0])
    assert "Reading a." not in json.dumps(sent["messages"])


def test_compact_on_a_finished_conversation_is_a_follow_up_that_compacts(
    open_app: OpenApp, workspace: Path
) -> None:
    page = open_app()
    start(page, workspace, "Show me the demo.", "demo")
    ends(page, 1)
    expect(page.get_by_test_id("compaction")).to_have_count(0)
    page.get_by_test_id("compact-button").click()
    ends(page, 2)
    fold = page.get_by_test_id("compaction")
    expect(fold).to_have_count(1)
    expect(fold).to_contain_text("summarised by an extract")
    expect(fold).to_contain_text("asked by the user")
    # Asked again at once: nothing left to compact, and the run says so.
    page.get_by_test_id("compact-button").click()
    ends(page, 3)
    expect(page.get_by_test_id("run-end").last).to_contain_text("Completed")
    expect(page.get_by_test_id("compaction")).to_have_count(1)
