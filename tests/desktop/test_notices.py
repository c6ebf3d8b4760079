"""Notifications you can answer, against a notification daemon on a private
D-Bus bus (tests/desktop/notification_daemon.py: the real interface, and a
button a test can press): the real embedded server, real scripted runs, the
desktop's ActivityService as the window starts it.

- an approval arrives with Allow and Deny; Allow pressed on the daemon answers
  through the server's approval route (``by: notification``) and the run goes on;
- an approval answered in the window is withdrawn from the screen;
- a notice raised while no daemon runs is kept (in the state folder) and shown
  once a daemon takes the name; kept across a restart of the app too;
- clicking a notice opens the window on its run.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.activity import approval_notice
from desktop.activity_service import ActivityService
from desktop.alerts import Notice
from desktop.notices import FILE_NAME, NoticeDesk
from desktop.notify import Notifier
from server.core.paths import resolve_paths
from server.web.serve import EmbeddedServer
from tests.conftest import require
from tests.desktop.notification_daemon import NotificationDaemon
from tests.desktop.test_notify import start_bus, stop

WRITE_SCRIPT = {
    "turns": [
        {"tool_calls": [{"tool": "write_file", "args": {"path": "a.txt", "content": "hi"}}]},
        {"text": "written"},
    ]
}
DONE_SCRIPT = {"turns": [{"text": "nothing to do"}]}


def wait_for(condition: Callable[[], object], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


@pytest.fixture
def bus() -> Iterator[str]:
    require("Linux", sys.platform.startswith("linux"))
    process, address = start_bus()
    yield address
    stop(process)


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    embedded = EmbeddedServer()
    embedded.start()
    yield embedded
    embedded.stop()


def post(server: EmbeddedServer, path: str, body: object) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{server.base_url}{path}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        data = json.loads(answer.read())
    assert isinstance(data, dict)
    return data


def start_run(server: EmbeddedServer, workspace: Path, script: object, **extra: str) -> str:
    body = {
        "workspace": str(workspace),
        "task": "write a.txt",
        "model": "script",
        "script": script,
        **extra,
    }
    return str(post(server, "/api/runs", body)["run"]["id"])


def run_of(service: ActivityService, run_id: str) -> dict[str, Any]:
    return service.app.run(run_id)


def events_of(server: EmbeddedServer, run_id: str) -> list[dict[str, Any]]:
    request = urllib.request.Request(
        f"{server.base_url}/api/runs/{run_id}/events",
        headers={"Authorization": f"Bearer {server.token}"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        data = json.loads(answer.read())
    events = data["events"] if isinstance(data, dict) else data
    assert isinstance(events, list)
    return events


@pytest.fixture
def service_for(server: EmbeddedServer, bus: str) -> Iterator[Callable[..., ActivityService]]:
    started: list[ActivityService] = []

    def make(**kwargs: Any) -> ActivityService:
        service = ActivityService(
            server.port,
            server.token,
            state_dir=resolve_paths().state,
            bus=bus,
            retry_seconds=3600.0,
            **kwargs,
        )
        service.start()
        wait_for(lambda: service.client.connections > 0, "the /ws client to connect")
        started.append(service)
        return service

    yield make
    for service in started:
        service.stop()


def test_allow_pressed_on_the_notification_lets_the_run_go_on(
    bus: str,
    server: EmbeddedServer,
    workspace: Path,
    service_for: Callable[..., ActivityService],
) -> None:
    daemon = NotificationDaemon(bus).start()
    opened: list[str] = []
    try:
        service = service_for(open_run=opened.append)
        run_id = start_run(server, workspace, WRITE_SCRIPT, mode="supervised")
        shown = wait_for(lambda: daemon.find("allow write_file"), "the approval notice")
        assert shown.actions == {"default": "Open", "allow": "Allow", "deny": "Deny"}
        assert shown.hints["urgency"] == ("y", 2)  # critical
        assert service.activity.state == "approval"

        daemon.press(shown.id, "allow")
        finished = wait_for(lambda: daemon.find("Run finished"), "the run-finished notice")
        assert "write a.txt" in finished.title
        assert run_of(service, run_id)["status"] == "completed"
        assert (workspace / "a.txt").read_text() == "hi"
        resolved = [e for e in events_of(server, run_id) if e["type"] == "approval_resolved"]
        assert [(e["decision"], e["by"]) for e in resolved] == [("allow_once", "notification")]

        daemon.press(finished.id, "default")  # a click on the notice itself
        wait_for(lambda: opened, "the window to be opened on the run")
        assert opened == [run_id]
        assert service.activity.state == "idle"
    finally:
        daemon.stop()


def test_an_approval_answered_in_the_window_is_withdrawn(
    bus: str,
    server: EmbeddedServer,
    workspace: Path,
    service_for: Callable[..., ActivityService],
) -> None:
    daemon = NotificationDaemon(bus).start()
    try:
        service_for()
        run_id = start_run(server, workspace, WRITE_SCRIPT, mode="supervised")
        shown = wait_for(lambda: daemon.find("allow write_file"), "the approval notice")
        events = wait_for(
            lambda: [e for e in events_of(server, run_id) if e["type"] == "approval_requested"],
            "the approval event",
        )
        post(
            server,
            f"/api/runs/{run_id}/approvals/{events[0]['call_id']}",
            {"decision": "deny", "by": "web"},
        )
        wait_for(lambda: daemon.find("allow write_file") is None, "the notice to be withdrawn")
        assert [n.closed for n in daemon.notices if n.id == shown.id] == [True]
    finally:
        daemon.stop()


def test_a_notice_raised_with_no_daemon_is_shown_when_one_comes(
    bus: str,
    server: EmbeddedServer,
    workspace: Path,
    service_for: Callable[..., ActivityService],
) -> None:
    service = service_for()
    run_id = start_run(server, workspace, DONE_SCRIPT)
    kept = resolve_paths().state / FILE_NAME
    wait_for(lambda: f"run:{run_id}" in service.desk.pending(), "the notice to be kept")
    assert f"run:{run_id}" in kept.read_text()

    daemon = NotificationDaemon(bus).start()  # NameOwnerChanged: the desk shows what it kept
    try:
        shown = wait_for(lambda: daemon.find("Run finished"), "the kept notice to be shown")
        assert "nothing to do" in shown.body
        assert service.desk.pending() == []
        assert f"run:{run_id}" not in kept.read_text()
    finally:
        daemon.stop()


def test_a_kept_notice_survives_a_restart_of_the_app(
    bus: str,
    server: EmbeddedServer,
    workspace: Path,
    service_for: Callable[..., ActivityService],
) -> None:
    first = service_for()
    run_id = start_run(server, workspace, DONE_SCRIPT)
    wait_for(lambda: f"run:{run_id}" in first.desk.pending(), "the notice to be kept")
    first.stop()

    daemon = NotificationDaemon(bus).start()
    try:
        service_for()  # the app started again, the daemon there now
        shown = wait_for(lambda: daemon.find("Run finished"), "the kept notice")
        assert "write a.txt" in shown.title
    finally:
        daemon.stop()


def test_at_start_approvals_of_an_earlier_process_are_over_the_rest_is_kept(
    bus: str, tmp_path: Path
) -> None:
    notifier = Notifier(bus=bus)  # a bus with no daemon: nothing can be shown
    try:
        first = NoticeDesk(tmp_path, notifier)
        keys = (
            "approval:r-1:c-1",
            "quit",
            "context:r-2",
            "/a/session.jsonl",
            "run:r-2",
            "quit-cut",
        )
        for key in keys:
            assert first.post(Notice(key, "X", f"title {key}", "body", urgent=False)) is False
        assert first.say_once("close-to-tray", Notice("said:x", "INFO", "t", "b", urgent=False))
        again = NoticeDesk(tmp_path, notifier)  # the app started again
        assert again.pending() == ["run:r-2", "quit-cut", "said:x"]
        assert not again.say_once("close-to-tray", Notice("said:x", "INFO", "t", "b", urgent=False))
    finally:
        notifier.stop()


def test_an_unreadable_notices_file_is_set_aside_not_lost(bus: str, tmp_path: Path) -> None:

    (tmp_path / FILE_NAME).write_text("{not json")
    notifier = Notifier(bus=bus)
    try:
        desk = NoticeDesk(tmp_path, notifier)
        assert desk.pending() == []
        assert (tmp_path / "desktop-notices.unreadable").read_text() == "{not json"
    finally:
        notifier.stop()


def test_with_no_buttons_on_the_desktop_the_approval_says_where_to_answer(bus: str) -> None:
    daemon = NotificationDaemon(bus, capabilities=("body",)).start()
    notifier = Notifier(bus=bus)
    try:
        event = {
            "type": "approval_requested",
            "run_id": "r-1",
            "call_id": "c-1",
            "tool": "run_shell",
            "reason": "Supervised · Exec: Ask",
        }
        assert notifier.send(approval_notice(event, "build it")) is not None
        shown = wait_for(lambda: daemon.find("allow run_shell"), "the notice")
        assert shown.actions == {}
        assert shown.body.endswith("Answer in the Sparrow window.")
    finally:
        notifier.stop()
        daemon.stop()
