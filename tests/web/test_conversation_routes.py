"""Conversations over the API: a follow-up, the sessions list, the runs of a
session, and the request a turn sent."""

from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from tests.web.conftest import WS

SCRIPT = {
    "turns": [
        {"text": "Reading it.", "tool_calls": [{"tool": "read_file", "args": {"path": "a.txt"}}]},
        {"text": "It says hi."},
    ]
}


def _finish(client: TestClient, run_id: str) -> list[dict[str, Any]]:
    seen = []
    with client.websocket_connect(WS) as ws:
        ws.send_json({"op": "subscribe", "run_id": run_id})
        while True:
            seen.append(ws.receive_json())
            if seen[-1]["type"] == "run_finished":
                return seen


def _run(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    answer = client.post("/api/runs", json=body)
    assert answer.status_code == 201, answer.text
    run: dict[str, Any] = answer.json()["run"]
    assert _finish(client, run["id"])[-1]["status"] == "completed"
    return run


def test_a_conversation_over_the_api(client: TestClient, workspace: Path) -> None:
    (workspace / "a.txt").write_text("hi\n")
    first = _run(
        client,
        {"workspace": str(workspace), "task": "What is in a.txt?", "model": "script",
         "script": SCRIPT},
    )
    second = _run(
        client,
        {"continue": first["id"], "task": "Thanks!", "model": "script",
         "script": {"turns": [{"text": "You're welcome."}]}},
    )
    assert second["session_id"] == first["session_id"]

    sessions = client.get("/api/sessions").json()["sessions"]
    assert [(s["id"], s["title"], s["runs"]) for s in sessions] == [
        (first["session_id"], "What is in a.txt?", 2)
    ]
    assert sessions[0]["last_run"]["id"] == second["id"]
    runs = client.get(f"/api/sessions/{first['session_id']}/runs").json()["runs"]
    assert [r["id"] for r in runs] == [first["id"], second["id"]]

    # What the follow-up's only turn sent: the whole history, then the new task.
    sent = client.get(f"/api/runs/{second['id']}/requests/1").json()["request"]
    assert sent["model"] == "script" and "You are Sparrow" in sent["system"]
    assert [t["name"] for t in sent["tools"]][:2] == ["read_file", "list_dir"]
    assert [m["role"] for m in sent["messages"]] == [
        "user", "assistant", "tool", "assistant", "user"
    ]
    assert sent["messages"][2]["content"].startswith("hi")
    assert sent["messages"][-1] == {"role": "user", "text": "Thanks!"}
    # The first run's second turn had not yet seen the follow-up.
    earlier = client.get(f"/api/runs/{first['id']}/requests/2").json()["request"]
    assert [m["role"] for m in earlier["messages"]] == ["user", "assistant", "tool"]


def test_unknown_sessions_runs_and_turns_are_404(client: TestClient, workspace: Path) -> None:
    run = _run(client, {"workspace": str(workspace), "task": "t", "model": "demo"})
    assert client.get("/api/sessions/s-nope/runs").status_code == 404
    assert client.get("/api/runs/r-nope/requests/1").status_code == 404
    assert client.get(f"/api/runs/{run['id']}/requests/99").status_code == 404
    assert client.post("/api/runs", json={"continue": "r-nope", "task": "t"}).json() == {
        "error": "no such run: r-nope"
    }
