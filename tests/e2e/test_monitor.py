"""The Monitor view in headless Chromium against a real server whose session
monitor watches temporary Claude Code and Codex folders (CLAUDE_CONFIG_DIR and
CODEX_HOME point there): appending to a transcript moves its meter within a
second and raises its level; the view in both themes, with a few sessions."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from server.monitor.discovery import escape_cwd
from tests.e2e.conftest import (
    OpenApp,
    SparrowServer,
    launch_server,
    page_opener,
    session_folders_env,
)
from tests.monitor import transcripts as t

pytestmark = pytest.mark.e2e

# The promise: an append shows in the Monitor view within a second.
WITHIN_A_SECOND_MS = 1000


@dataclass(frozen=True)
class Folders:
    claude: Path  # CLAUDE_CONFIG_DIR
    codex: Path  # CODEX_HOME

    def claude_session(self, cwd: str) -> Path:
        return self.claude / "projects" / escape_cwd(cwd) / f"{uuid.uuid4()}.jsonl"

    def codex_session(self, session: str) -> Path:
        return t.codex_file(self.codex, session)


def ago(minutes: float) -> str:
    """A timestamp as the tools write it: the monitor shows sessions active lately."""
    when = datetime.now(UTC) - timedelta(minutes=minutes)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Folders:
    base = tmp_path_factory.mktemp("watched")
    return Folders(claude=base / "claude", codex=base / "codex")


@pytest.fixture(scope="module")
def monitor_server(
    tmp_path_factory: pytest.TempPathFactory, folders: Folders
) -> Iterator[SparrowServer]:
    home = tmp_path_factory.mktemp("sparrow-home")
    with launch_server(home, session_folders_env(folders.claude, folders.codex)) as server:
        yield server


@pytest.fixture
def open_monitor(browser: Browser, monitor_server: SparrowServer) -> Iterator[OpenApp]:
    with page_opener(browser, monitor_server) as open_page:
        yield open_page


def meter_of(page: Page, path: Path) -> Locator:
    return page.locator(f'[data-testid="session-meter"][data-key="{path}"]')


def show_monitor(page: Page) -> None:
    page.get_by_test_id("monitor-tab").click()
    expect(page).to_have_url(re.compile("#monitor$"))
    expect(page.get_by_test_id("monitor-view")).to_be_visible()


def claude(cwd: str, tokens: int, minutes_ago: float, n: int, **kw: Any) -> dict[str, Any]:
    return t.context_line(tokens, f"msg_{n:03d}", ts=ago(minutes_ago), cwd=cwd, **kw)


def on(cwd: str, line: dict[str, Any]) -> dict[str, Any]:
    """A line of the builders (user, compaction) in the session's own folder."""
    return {**line, "cwd": cwd}


def test_appending_to_a_transcript_moves_its_meter_within_a_second(
    open_monitor: OpenApp, folders: Folders
) -> None:
    cwd = "/home/ada/src/live-meter"
    path = t.write(
        folders.claude_session(cwd),
        on(cwd, t.user("Refactor the parser.", ts=ago(6))),
        claude(cwd, 62_000, 5, 1),
    )
    page = open_monitor()
    show_monitor(page)
    meter = meter_of(page, path)
    level, tokens = meter.get_by_test_id("meter-level"), meter.get_by_test_id("meter-tokens")
    expect(level).to_have_text("OK")
    expect(tokens).to_have_text("62.0k / 200k")
    expect(meter.get_by_test_id("meter-tool")).to_have_text("Claude Code")
    expect(meter.get_by_test_id("meter-project")).to_have_text("live-meter")
    expect(meter.get_by_test_id("meter-threshold")).to_have_count(2)

    t.append(path, claude(cwd, 112_000, 0, 2))
    expect(tokens).to_have_text("112k / 200k", timeout=WITHIN_A_SECOND_MS)
    expect(level).to_have_text("Warning", timeout=WITHIN_A_SECOND_MS)

    t.append(path, claude(cwd, 151_000, 0, 3))
    expect(tokens).to_have_text("151k / 200k", timeout=WITHIN_A_SECOND_MS)
    expect(level).to_have_text("Critical", timeout=WITHIN_A_SECOND_MS)
    expect(meter).to_have_attribute("data-level", "critical")
    # The crossing itself reaches the page: the meter flashes and it is announced.
    expect(meter).to_have_attribute("data-crossed", "critical")
    expect(page.get_by_test_id("monitor-announcer")).to_have_text(
        "live-meter (Claude Code): context rose to critical, 151k of 200k tokens."
    )
    expect(meter.get_by_test_id("meter-percent")).to_have_text("76%")
    expect(meter.get_by_test_id("meter-trend").locator(".trend-line")).to_have_attribute(
        "d", re.compile(r"^M[\d.]+ [\d.]+ L[\d.]+ [\d.]+ L[\d.]+ [\d.]+$")
    )

    path.unlink()
    expect(meter).to_have_count(0)


# (context tokens, minutes ago) of each turn.
CLIMBING = [(24_000, 90), (46_000, 78), (71_000, 64), (93_000, 47), (118_000, 28), (131_000, 12)]
CLIMBING += [(138_500, 6), (142_300, 1)]
CODEX_TURNS = [(41_000, 66), (77_000, 51), (108_000, 33), (139_000, 17), (151_800, 4)]


def write_sessions(folders: Folders) -> dict[str, Path]:
    """A few sessions of both tools, as a real afternoon leaves them."""
    engine = "/home/ada/src/engine"
    critical = t.write(
        folders.claude_session(engine),
        on(engine, t.user("Port the scheduler to the new queue.", ts=ago(95))),
        *[claude(engine, tokens, minutes, n) for n, (tokens, minutes) in enumerate(CLIMBING)],
    )
    website = "/home/ada/src/website"
    compacted = t.write(
        folders.claude_session(website),
        on(website, t.user("Rewrite the docs navigation.", ts=ago(180))),
        *[
            claude(website, tokens, minutes, n, model="claude-opus-4-1-20250805")
            for n, (tokens, minutes) in enumerate(
                [(38_000, 175), (82_000, 150), (121_000, 120), (149_000, 96)]
            )
        ],
        on(website, t.compact_boundary(155_200, 21_400, trigger="auto", ts=ago(75))),
        on(website, t.compact_summary(ts=ago(75))),
        *[
            claude(website, tokens, minutes, 10 + n, model="claude-opus-4-1-20250805")
            for n, (tokens, minutes) in enumerate([(34_000, 70), (51_000, 40), (58_700, 3)])
        ],
    )
    payments = "/home/ada/work/payments-api"
    codex_id = "0199b7a2-4c11-7d30-9a52-5e1c2d3f4a6b"
    codex = t.write(
        folders.codex_session(codex_id),
        t.codex_meta(codex_id, cwd=payments, ts=ago(70)),
        t.codex_turn(cwd=payments, ts=ago(70)),
        t.codex_tokens(None, ts=ago(70)),
        *[
            t.codex_tokens(tokens, cumulative=tokens * 3, ts=ago(minutes))
            for tokens, minutes in CODEX_TURNS
        ],
    )
    notes = "/home/ada/notes"
    fresh = t.write(
        folders.claude_session(notes),
        on(notes, t.user("Summarise yesterday's meeting.", ts=ago(2))),
    )
    return {"critical": critical, "compacted": compacted, "codex": codex, "fresh": fresh}


def expect_sessions(page: Page, sessions: dict[str, Path]) -> None:
    meters = page.get_by_test_id("session-meter")
    expect(meters).to_have_count(len(sessions))
    order = meters.evaluate_all("els => els.map(e => e.dataset.key)")
    # Most urgent first: critical, warning, then ok, then the one without usage.
    assert order == [str(sessions[k]) for k in ("critical", "codex", "compacted", "fresh")]
    codex = meter_of(page, sessions["codex"])
    expect(codex.get_by_test_id("meter-tool")).to_have_text("Codex")
    expect(codex.get_by_test_id("meter-level")).to_have_text("Warning")
    expect(codex.get_by_test_id("meter-tokens")).to_have_text("152k / 272k")
    expect(codex.get_by_test_id("meter-model")).to_have_text("gpt-5-codex")
    compacted = meter_of(page, sessions["compacted"])
    expect(compacted.get_by_test_id("meter-compaction")).to_have_text(
        "Compacted 1 h ago · 155k → 21.4k · auto"
    )
    expect(compacted.get_by_test_id("meter-model")).to_have_text("claude-opus-4-1")
    fresh = meter_of(page, sessions["fresh"])
    expect(fresh.get_by_test_id("meter-level")).to_have_text("No data")
    expect(fresh.get_by_test_id("meter-source")).to_have_text("no usage yet")
    expect(page.get_by_test_id("summary-count")).to_have_text(
        ["1 critical", "1 warning", "1 ok", "1 no data"]
    )


def test_the_monitor_view_in_both_themes(
    open_monitor: OpenApp, folders: Folders, monitor_server: SparrowServer, artifacts: Path
) -> None:
    sessions = write_sessions(folders)
    try:
        dark = open_monitor()
        dark.set_viewport_size({"width": 1280, "height": 900})
        show_monitor(dark)
        expect_sessions(dark, sessions)
        dark.evaluate("document.fonts.ready")
        dark.screenshot(path=artifacts / "monitor-dark.png")

        light = open_monitor(color_scheme="light")
        light.set_viewport_size({"width": 1280, "height": 900})
        light.goto(f"{monitor_server.base_url}/#monitor")
        expect_sessions(light, sessions)
        light.evaluate("document.fonts.ready")
        light.screenshot(path=artifacts / "monitor-light.png")
    finally:
        for path in sessions.values():
            path.unlink()


def test_with_no_sessions_the_view_says_where_it_looks(app: Page, artifacts: Path) -> None:
    """The shared server watches empty folders."""
    show_monitor(app)
    expect(app.get_by_test_id("monitor-empty")).to_be_visible()
    roots = app.get_by_test_id("monitor-roots")
    expect(roots).to_contain_text(re.compile(r"Claude Code\s*/\S+/claude/projects"))
    expect(roots).to_contain_text(re.compile(r"Codex\s*/\S+/codex/sessions"))
    expect(app.get_by_test_id("session-meter")).to_have_count(0)
    app.screenshot(path=artifacts / "monitor-empty.png")
    # Back to the runs; the address follows the tabs.
    app.get_by_test_id("runs-tab").click()
    expect(app).not_to_have_url(re.compile("#monitor"))
    expect(app.get_by_test_id("run-placeholder")).to_be_visible()
    expect(app.get_by_test_id("monitor-view")).to_be_hidden()
    app.go_back()
    expect(app.get_by_test_id("monitor-view")).to_be_visible()


def test_a_meter_is_drawn_against_the_models_own_window_or_says_it_is_unknown(
    open_monitor: OpenApp, folders: Folders, artifacts: Path
) -> None:
    large_cwd, unknown_cwd = "/home/ada/src/long", "/home/ada/src/mystery"
    large = t.write(
        folders.claude_session(large_cwd), claude(large_cwd, 142_300, 1, 1, model="claude-opus-5-5")
    )
    unknown = t.write(
        folders.claude_session(unknown_cwd),
        claude(unknown_cwd, 142_300, 1, 1, model="acme-coder-7"),
    )
    try:
        page = open_monitor()
        show_monitor(page)
        # A 1M window: 142K is 14%, ok (it was drawn as 71% of 200K, critical).
        meter = meter_of(page, large)
        expect(meter.get_by_test_id("meter-tokens")).to_have_text("142k / 1M")
        expect(meter.get_by_test_id("meter-percent")).to_have_text("14%")
        expect(meter.get_by_test_id("meter-level")).to_have_text("OK")
        expect(meter.get_by_test_id("meter-bar")).to_have_attribute("aria-valuemax", "1000000")
        # No window: said, with no percentage, nothing filled and no threshold marks.
        meter = meter_of(page, unknown)
        expect(meter).to_have_attribute("data-window", "unknown")
        expect(meter.get_by_test_id("meter-tokens")).to_have_text("142k / window unknown")
        expect(meter.get_by_test_id("meter-percent")).to_have_text("")
        expect(meter.get_by_test_id("meter-level")).to_have_text("No data")
        expect(meter.get_by_test_id("meter-source")).to_contain_text("window not known")
        fill = meter.get_by_test_id("meter-fill")
        assert fill.evaluate("e => e.getBoundingClientRect().width") == 0
        expect(meter.get_by_test_id("meter-threshold")).to_have_count(2)
        for mark in meter.get_by_test_id("meter-threshold").all():
            expect(mark).to_be_hidden()
        expect(meter.get_by_test_id("meter-bar")).to_have_attribute(
            "aria-valuetext", "142k tokens, window unknown, No data"
        )
        expect(meter.get_by_test_id("meter-handoff")).to_be_hidden()
        page.screenshot(path=artifacts / "monitor-windows.png")
    finally:
        large.unlink()
        unknown.unlink()


def test_a_critical_meter_writes_a_handoff_doc(
    open_monitor: OpenApp, folders: Folders, tmp_path: Path, artifacts: Path
) -> None:
    project = tmp_path / "engine"
    project.mkdir()
    path = t.write(
        folders.claude_session(str(project)),
        *t.claude_work(str(project), tokens=151_000, ts=ago(1)),
    )
    calm_cwd = "/home/ada/src/calm"
    calm = t.write(folders.claude_session(calm_cwd), claude(calm_cwd, 20_000, 1, 1))
    try:
        page = open_monitor()
        show_monitor(page)
        meter = meter_of(page, path)
        expect(meter.get_by_test_id("meter-level")).to_have_text("Critical")
        # Offered at the critical level only.
        expect(meter_of(page, calm).get_by_test_id("meter-level")).to_have_text("OK")
        expect(meter_of(page, calm).get_by_test_id("meter-handoff")).to_be_hidden()
        button = meter.get_by_test_id("meter-handoff")
        expect(button).to_have_text("Write handoff doc")
        button.click()
        note = meter.get_by_test_id("meter-handoff-note")
        expect(note).to_have_text(re.compile(r"^Written to .+\.md$"))
        written = Path(note.inner_text().removeprefix("Written to "))
        assert written.parent == project / ".sparrow" / "handoff"
        text = written.read_text(encoding="utf-8")
        assert "## Files modified\n\n- src/queue.py\n- src/shim.py\n" in text
        assert "ctx 76% · 151,000 of 200,000 tokens · level critical" in text
        expect(button).to_be_enabled()
        meter.screenshot(path=artifacts / "monitor-handoff.png")
    finally:
        path.unlink()
        calm.unlink()
