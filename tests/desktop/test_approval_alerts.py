"""A run waiting for an approval shows a desktop notice: the real embedded
server, a Supervised scripted run, the desktop's client of /ws."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.alerts import Notice
from desktop.approval_alerts import ApprovalAlerts, approval_notice
from server.web.serve import EmbeddedServer
from tests.desktop.test_monitor_client import wait_for


def test_an_approval_request_makes_an_urgent_notice() -> None:
    event = {
        "type": "approval_requested",
        "run_id": "r-1",
        "call_id": "c-1",
        "tool": "write_file",
        "reason": "Supervised · Mutating: Ask",
        "expires_at": 1300.0,
    }
    notice = approval_notice(event, now=1000.0)
    assert notice == Notice(
        key="approval:r-1:c-1",
        level="APPROVAL",
        title="Sparrow asks: allow write_file?",
        body="Supervised · Mutating: Ask. Answer in the Sparrow window. "
        "Without an answer in 5 min it is denied.",
        urgent=True,
    )
    assert approval_notice({"type": "tool_requested", "run_id": "r-1"}) is None


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    embedded = EmbeddedServer()
    embedded.start()
    yield embedded
    embedded.stop()


def _post(server: EmbeddedServer, path: str, body: object, method: str = "POST") -> object:
    request = urllib.request.Request(
        f"{server.base_url}{path}",
        data=json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def test_a_supervised_run_waiting_for_an_answer_is_notified(
    server: EmbeddedServer, workspace: Path
) -> None:
    notices: list[Notice] = []
    lock = threading.Lock()

    def send(notice: Notice) -> None:
        with lock:
            notices.append(notice)

    alerts = ApprovalAlerts(server.port, server.token, send=send)
    alerts.start()
    try:
        wait_for(lambda: alerts.client.connections > 0, "the client to connect")
        script = {
            "turns": [
                {"tool_calls": [{"tool": "write_file", "args": {"path": "a", "content": ""}}]},
                {"text": "ok"},
            ]
        }
        created = _post(
            server,
            "/api/runs",
            {
                "workspace": str(workspace),
                "task": "t",
                "model": "script",
                "script": script,
                "mode": "supervised",
            },
        )
        assert isinstance(created, dict)
        run_id = created["run"]["id"]
        wait_for(lambda: bool(notices), "the approval notice")
        assert notices[0].title == "Sparrow asks: allow write_file?"
        assert notices[0].key.startswith(f"approval:{run_id}:")
        call_id = notices[0].key.rsplit(":", 1)[1]
        _post(server, f"/api/runs/{run_id}/approvals/{call_id}", {"decision": "deny"})
    finally:
        alerts.stop()
    assert not alerts.client.running
