"""No notice is lost while the desktop's socket to its server is down: when it
connects again, the desktop reads the runs and their waiting approvals as they
are now (``GET /api/runs``, ``GET /api/runs/{id}/approvals``). Against the real
embedded server, real scripted runs, a real notification daemon on a private
bus, and a relay between the desktop and the server whose connections are cut
and mended (tests/desktop/relay.py)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.activity_service import ActivityService
from server.core.paths import resolve_paths
from server.web.serve import EmbeddedServer
from tests.desktop.notification_daemon import NotificationDaemon
from tests.desktop.relay import Relay
from tests.desktop.test_notices import (
    WRITE_SCRIPT,
    bus,  # noqa: F401  (a fixture)
    events_of,
    post,
    server,  # noqa: F401  (a fixture)
    start_run,
    wait_for,
)


@pytest.fixture
def relay(server: EmbeddedServer) -> Iterator[Relay]:  # noqa: F811
    front = Relay(server.port)
    yield front
    front.close()


def get(server: EmbeddedServer, path: str) -> dict[str, object]:  # noqa: F811
    request = urllib.request.Request(
        f"{server.base_url}{path}", headers={"Authorization": f"Bearer {server.token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        data = json.loads(answer.read())
    assert isinstance(data, dict)
    return data


def run_info(server: EmbeddedServer, run_id: str) -> dict[str, object]:  # noqa: F811
    run = get(server, f"/api/runs/{run_id}")["run"]
    assert isinstance(run, dict)
    return run


def test_what_happened_while_the_socket_was_down_is_noticed_when_it_is_back(
    bus: str,  # noqa: F811
    server: EmbeddedServer,  # noqa: F811
    relay: Relay,
    workspace: Path,
) -> None:
    daemon = NotificationDaemon(bus).start()
    service = ActivityService(
        relay.port, server.token, state_dir=resolve_paths().state, bus=bus, retry_seconds=3600.0
    )
    service.start()
    try:
        wait_for(lambda: service.client.connections > 0, "the /ws client to connect")
        first = start_run(server, workspace, WRITE_SCRIPT, mode="supervised", task="first")
        asked = wait_for(lambda: daemon.find("allow write_file"), "the first approval notice")
        assert "“first”" in asked.body

        relay.cut()  # the socket drops; what follows happens while it is down
        call = wait_for(
            lambda: [e for e in events_of(server, first) if e["type"] == "approval_requested"],
            "the first approval's event",
        )[0]["call_id"]
        post(server, f"/api/runs/{first}/approvals/{call}", {"decision": "allow_once"})
        wait_for(
            lambda: run_info(server, first)["status"] == "completed",
            "the first run to finish",
        )
        second = start_run(server, workspace, WRITE_SCRIPT, mode="supervised", task="second")
        wait_for(lambda: run_info(server, second)["waiting"] == 1, "the second run to ask")
        assert daemon.find("Run finished") is None
        assert [n.title for n in daemon.showing()] == [asked.title]  # nothing new heard

        relay.mend()
        wait_for(lambda: service.client.connections > 1, "the /ws client to connect again")
        wait_for(
            lambda: any("“second”" in n.body for n in daemon.showing()),
            "the notice of the approval asked while the socket was down",
        )
        wait_for(lambda: daemon.find("Run finished: first"), "the first run's end, missed")
        wait_for(
            lambda: not any("“first”" in n.body for n in daemon.showing()),
            "the notice of the approval answered meanwhile to be withdrawn",
        )
        assert [n.closed for n in daemon.notices if n.id == asked.id] == [True]
        assert [(w.run_id, w.tool) for w in service.activity.approvals] == [(second, "write_file")]
        assert [run.run_id for run in service.activity.runs] == [second]

        # The second approval's own event may come after the read: still one notice.
        answers = [n for n in daemon.notices if "“second”" in n.body]
        assert len(answers) == 1 and answers[0].actions["allow"] == "Allow"
        daemon.press(answers[0].id, "allow")
        wait_for(lambda: daemon.find("Run finished: second"), "the second run to finish")
        assert len([n for n in daemon.notices if "Run finished: first" in n.title]) == 1
    finally:
        service.stop()
        daemon.stop()
