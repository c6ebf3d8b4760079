from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.web.conftest import WS


def wait_finished(client: TestClient, run_id: str) -> dict[str, Any]:
    with client.websocket_connect(WS) as ws:
        ws.send_json({"op": "subscribe", "run_id": run_id})
        while ws.receive_json()["type"] != "run_finished":
            pass
    run: dict[str, Any] = client.get(f"/api/runs/{run_id}").json()["run"]
    return run


def test_a_demo_run_through_the_api(client: TestClient, workspace: Path) -> None:
    created = client.post("/api/runs", json={"workspace": str(workspace), "task": "demo"})
    assert created.status_code == 201
    run = created.json()["run"]
    assert run["status"] == "running" and run["model"] == "demo"
    finished = wait_finished(client, run["id"])
    assert finished["status"] == "completed" and finished["turns"] == 5
    events = client.get(f"/api/runs/{run['id']}/events").json()["events"]
    assert events[0]["type"] == "run_started" and events[-1]["type"] == "run_finished"
    assert [r["id"] for r in client.get("/api/runs").json()["runs"]] == [run["id"]]
    assert client.get("/api/workspaces/recent").json() == {"workspaces": [str(workspace.resolve())]}


def test_a_scripted_run_through_the_api(client: TestClient, workspace: Path) -> None:
    script = {
        "turns": [
            {"tool_calls": [{"tool": "write_file", "args": {"path": "x", "content": "y"}}]},
            {"text": "done"},
        ]
    }
    run = client.post(
        "/api/runs",
        json={"workspace": str(workspace), "task": "t", "model": "script", "script": script},
    ).json()["run"]
    assert wait_finished(client, run["id"])["status"] == "completed"
    assert (workspace / "x").read_text() == "y"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"task": "t"}', "'workspace' is required"),
        (b'{"workspace": 3, "task": "t"}', "'workspace' must be a string"),
        (b'{"workspace": "/no/such/folder", "task": "t"}', "workspace not found"),
        (b'{"workspace": "/etc/hostname", "task": "t"}', "is a file, not a folder"),
        (b'{"workspace": "{ws}", "task": ""}', "the task is empty"),
        (b'{"workspace": "{ws}", "task": "t", "model": "nope"}', "is not a model id"),
    ],
)
def test_bad_requests_get_clear_errors_and_the_server_keeps_serving(
    client: TestClient, workspace: Path, body: bytes, message: str
) -> None:
    response = client.post(
        "/api/runs",
        content=body.replace(b"{ws}", str(workspace).encode()),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert client.get("/api/health").json()["ok"] is True


def test_unknown_runs_are_404(client: TestClient) -> None:
    for method, url in (
        ("GET", "/api/runs/r-x"),
        ("GET", "/api/runs/r-x/events"),
        ("POST", "/api/runs/r-x/cancel"),
    ):
        response = client.request(method, url)
        assert response.status_code == 404 and response.json() == {"error": "no such run"}


def test_cancel_a_running_run(client: TestClient, workspace: Path) -> None:
    script = {"turns": [{"tool_calls": [{"tool": "run_shell", "args": {"command": "sleep 30"}}]}]}
    run = client.post(
        "/api/runs",
        json={"workspace": str(workspace), "task": "t", "model": "script", "script": script},
    ).json()["run"]
    with client.websocket_connect(WS) as ws:
        ws.send_json({"op": "subscribe", "run_id": run["id"]})
        while ws.receive_json()["type"] != "tool_requested":
            pass
        assert client.post(f"/api/runs/{run['id']}/cancel").status_code == 202
        while (event := ws.receive_json())["type"] != "run_finished":
            pass
    assert event["status"] == "cancelled" and event["reason"] == "cancelled by the user"


def test_the_ui_is_served_at_the_root(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "<html" in page.text.lower()
    assert page.headers["cache-control"] == "no-cache" and page.headers["x-frame-options"] == "DENY"
