"""The desktop's client of /ws/monitor against the real embedded server, whose
monitor watches a temporary CLAUDE_CONFIG_DIR: a transcript appended to until
it crosses warning makes one notice; the tray state follows; the client
reconnects to a restarted server and stops cleanly."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from desktop.alert_service import AlertService
from desktop.alerts import ICON_WARNING, Notice, TrayState
from desktop.monitor_client import MonitorClient
from server.web.serve import EmbeddedServer
from tests.monitor import transcripts as t

SESSION = "9a8b7c6d-0000-4000-8000-000000000001"
TIMEOUT = 20.0


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def wait_for(condition: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture
def transcript() -> Path:
    config = Path(os.environ["CLAUDE_CONFIG_DIR"])  # a temporary folder (tests/conftest.py)
    path = config / "projects" / "-home-ada-src-engine" / f"{SESSION}.jsonl"
    return t.write(path, t.user(ts=now()), t.context_line(20_000, "m1", ts=now()))


@pytest.fixture
def server(transcript: Path) -> Iterator[EmbeddedServer]:
    embedded = EmbeddedServer()
    embedded.start()
    yield embedded
    embedded.stop()


class Recorder:
    def __init__(self) -> None:
        self.notices: list[Notice] = []
        self.states: list[TrayState] = []
        self.lock = threading.Lock()

    def send(self, notice: Notice) -> None:
        with self.lock:
            self.notices.append(notice)

    def show(self, state: TrayState) -> None:
        with self.lock:
            self.states.append(state)

    @property
    def state(self) -> TrayState | None:
        with self.lock:
            return self.states[-1] if self.states else None


def test_a_crossing_seen_live_makes_one_notice_and_the_tray_follows(
    server: EmbeddedServer, transcript: Path
) -> None:
    seen = Recorder()
    alerts = AlertService(server.port, server.token, send=seen.send, show_state=seen.show)
    alerts.start()
    try:
        wait_for(
            lambda: seen.state is not None and seen.state.sessions == 1,
            "the first snapshot listing the session",
        )
        assert seen.state is not None and (seen.state.level, seen.state.connected) == ("ok", True)
        assert seen.notices == []

        # The agent works on: the context grows past 100K (warning, below 130K).
        for n, tokens in enumerate((60_000, 90_000, 115_000), start=2):
            t.append(transcript, t.context_line(tokens, f"m{n}", ts=now()))
            time.sleep(0.2)
        wait_for(lambda: bool(seen.notices), "a notice")
        wait_for(lambda: seen.state is not None and seen.state.level == "warning", "a warning tray")
        (notice,) = seen.notices
        assert (notice.key, notice.level, notice.urgent) == (str(transcript), "warning", False)
        assert notice.title == "Context warning: engine"
        assert "115k of 200k tokens" in notice.body
        assert seen.state is not None and seen.state.icon == ICON_WARNING

        # More lines at the same level: no second notice.
        t.append(transcript, t.context_line(118_000, "m9", ts=now()))
        time.sleep(1.5)
        assert len(seen.notices) == 1
    finally:
        alerts.stop()
    assert not alerts.client.running


def test_sessions_already_at_warning_at_startup_make_no_notice(transcript: Path) -> None:
    t.append(transcript, t.context_line(120_000, "m2", ts=now()))
    t.aged(transcript)  # unchanged since well before the server starts
    seen = Recorder()
    with EmbeddedServer() as embedded:
        alerts = AlertService(embedded.port, embedded.token, send=seen.send, show_state=seen.show)
        alerts.start()
        try:
            wait_for(
                lambda: seen.state is not None and seen.state.level == "warning",
                "the warning in the first snapshot",
            )
            time.sleep(1.0)  # the initial crossing message, if any, has come by now
        finally:
            alerts.stop()
    assert seen.notices == []


def test_it_reconnects_to_a_restarted_server_and_says_when_it_is_offline(
    transcript: Path,
) -> None:
    messages: list[dict[str, Any]] = []
    disconnects = threading.Event()
    token = "a-fixed-token-for-both-servers-0123456789"
    first = EmbeddedServer(token=token)
    first.start()
    client = MonitorClient(
        first.port, token, messages.append, on_disconnect=disconnects.set, max_delay=0.5
    )
    client.start()
    try:
        wait_for(lambda: client.connections == 1 and bool(messages), "the first connection")
        assert messages[0]["type"] == "monitor_sessions"
        first.stop()
        assert disconnects.wait(TIMEOUT), "the client did not notice the server stopping"
        count = len(messages)
        with EmbeddedServer(port=first.port, token=token):
            wait_for(lambda: client.connections == 2, "the reconnection")
            wait_for(lambda: len(messages) > count, "the state after reconnecting")
            assert messages[count]["type"] == "monitor_sessions"
    finally:
        client.stop()
    assert not client.running


def test_a_wrong_token_never_connects(server: EmbeddedServer) -> None:
    messages: list[dict[str, Any]] = []
    client = MonitorClient(server.port, "not-the-token-0123456789", messages.append)
    client.start()
    time.sleep(1.0)
    client.stop()
    assert (client.connections, messages, client.running) == (0, [], False)


def test_it_sends_the_token_and_the_windows_origin() -> None:
    client = MonitorClient(4321, "a/b+c", lambda _m: None)
    assert client.url == "ws://127.0.0.1:4321/ws/monitor?token=a%2Fb%2Bc"
    assert client.origin == "http://127.0.0.1:4321"
