"""A run of another process through the app's API and socket: its events come
live, and what cannot be done from here says why instead of doing nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from starlette.testclient import TestClient

from tests.cli.test_cli import SPARROW
from tests.runtime.foreign import Foreign
from tests.web.conftest import WS
from tests.web.test_api import wait_finished


def line(kind: str, seq: int, **fields: object) -> str:
    return json.dumps({"type": kind, "run_id": "r-far", "seq": seq, "ts": 1.0, **fields}) + "\n"


STARTED = line("run_started", 1, task="far", workspace="/w", model="script", session_id="s")
ASKS = line(
    "approval_requested",
    2,
    turn=1,
    call_id="c1",
    tool="write_file",
    args={"path": "x"},
    risk="Mutating",
    reason="writes",
    suggested_rule="write_file(x)",
    timeout_seconds=60.0,
    expires_at=9e9,
)
TEXT = line("text_delta", 3, turn=1, text="still going")


def test_a_terminal_run_streams_on_the_socket_and_is_answered_at_its_terminal(
    client: TestClient,
) -> None:
    far = Foreign("r-far", surface="cli")
    try:
        far.write(STARTED + ASKS)
        with client.websocket_connect(WS) as ws:
            ws.send_json({"op": "subscribe", "run_id": "r-far"})
            assert [ws.receive_json()["seq"] for _ in range(2)] == [1, 2]
            far.write(TEXT)  # after the subscription: comes live
            assert ws.receive_json() | {"ts": 0} == json.loads(TEXT) | {"ts": 0}
        run = client.get("/api/runs/r-far").json()["run"]
        where = run["elsewhere"]
        assert (where["surface"], where["can_cancel"]) == ("cli", True)
        assert where["pid"] == far.process.pid
        answered = client.post("/api/runs/r-far/approvals/c1", json={"decision": "allow_once"})
        assert answered.status_code == 409
        assert "answered at that terminal" in answered.json()["error"]
    finally:
        far.close()


def test_a_run_of_another_app_cannot_be_cancelled_from_here_and_says_so(
    client: TestClient,
) -> None:
    far = Foreign("r-far", surface="desktop")
    try:
        far.write(STARTED)
        where = client.get("/api/runs/r-far").json()["run"]["elsewhere"]
        assert where["can_cancel"] is False and "cancel it there" in where["note"]
        cancelled = client.post("/api/runs/r-far/cancel")
        assert cancelled.status_code == 409 and "cancel it there" in cancelled.json()["error"]
        assert client.get("/api/runs/r-far").json()["run"]["status"] == "running"
    finally:
        far.close()


def test_the_apps_running_run_is_listed_by_the_cli_and_left_running(
    client: TestClient, workspace: Path, tmp_path: Path
) -> None:
    gate = tmp_path / "go"
    wait = f"for i in $(seq 900); do [ -e {gate} ] && break; sleep 0.1; done"
    script = {
        "turns": [
            {"text": "Waiting.", "tool_calls": [{"tool": "run_shell", "args": {"command": wait}}]},
            {"text": "Done."},
        ]
    }
    run = client.post(
        "/api/runs",
        json={
            "workspace": str(workspace),
            "task": "the app's own",
            "model": "script",
            "script": script,
        },
    ).json()["run"]
    try:
        # Another process opens the store (and ends dead runs) while the app's run waits.
        listed = subprocess.run(
            [SPARROW, "runs", "--json"], capture_output=True, text=True, check=True, timeout=120
        ).stdout
        mine = [json.loads(row) for row in listed.splitlines() if run["id"] in row]
        assert [(r["task"], r["status"]) for r in mine] == [("the app's own", "running")]
        assert client.get(f"/api/runs/{run['id']}").json()["run"]["status"] == "running"
    finally:
        gate.touch()
    assert wait_finished(client, run["id"])["status"] == "completed"
    listed = subprocess.run(
        [SPARROW, "runs"], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert run["id"] in listed and "completed" in listed
