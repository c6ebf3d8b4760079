"""The sessions API on the real app: pages by cursor, search with snippets as
segments, one session, export, resume, and delete (refused while running)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from server.core.paths import Paths
from server.engine.store import Store
from tests.web.test_conversation_routes import _run

SESSION_KEYS = {
    "id", "workspace", "title", "models", "status", "tokens", "cost", "started_at", "ended_at",
    "parent", "agent", "runs", "last_run", "created_at",
}


def _script(*texts: str, tool_output_of: str = "") -> dict[str, Any]:
    turns: list[dict[str, Any]] = [{"text": t} for t in texts]
    if tool_output_of:
        turns.insert(0, {"text": "Reading.",
                         "tool_calls": [{"tool": "read_file", "args": {"path": tool_output_of}}]})
    return {"turns": turns}


def _start(client: TestClient, workspace: Path, task: str, **script: Any) -> dict[str, Any]:
    return _run(client, {"workspace": str(workspace), "task": task, "model": "script",
                         "script": _script("Done.", **script)})


def test_pages_search_one_session_and_export(client: TestClient, workspace: Path) -> None:
    (workspace / "animals.txt").write_text("a lonely axolotl\n")
    first = _start(client, workspace, "Read the animals", tool_output_of="animals.txt")
    later = [_start(client, workspace, f"task number {n}") for n in range(3)]

    body = client.get("/api/sessions", params={"limit": 2}).json()
    assert [s["id"] for s in body["sessions"]] == [r["session_id"] for r in later[::-1][:2]]
    assert set(body["sessions"][0]) == SESSION_KEYS
    assert body["sessions"][0]["status"] == "completed" and body["sessions"][0]["models"]
    assert "waiting" in body["sessions"][0]["last_run"]
    rest = client.get("/api/sessions", params={"limit": 2, "cursor": body["next"]}).json()
    assert [s["id"] for s in rest["sessions"]] == [later[0]["session_id"], first["session_id"]]
    assert rest["next"] is None
    assert client.get("/api/sessions", params={"cursor": "junk"}).status_code == 400
    assert client.get("/api/sessions", params={"limit": "x"}).status_code == 400
    other = client.get("/api/sessions", params={"workspace": "/nowhere"}).json()
    assert other == {"sessions": [], "next": None}

    found = client.get("/api/sessions/search", params={"q": "axolotl"}).json()["results"]
    assert [(r["session_id"], r["run_id"], r["kind"], r["turn"]) for r in found] == [
        (first["session_id"], first["id"], "tool_output", 1)
    ]
    assert {"text": "axolotl", "match": True} in found[0]["snippet"]
    assert found[0]["title"] == "Read the animals" and found[0]["seq"] > 0
    events = client.get(f"/api/runs/{first['id']}/events").json()["events"]
    assert next(e for e in events if e["seq"] == found[0]["seq"])["type"] == "tool_result"
    for odd in ['x"y', "AND", "(", "*", ""]:
        answer = client.get("/api/sessions/search", params={"q": odd})
        assert answer.status_code == 200 and "results" in answer.json()

    one = client.get(f"/api/sessions/{first['session_id']}").json()
    assert set(one) == SESSION_KEYS and [r["id"] for r in one["runs"]] == [first["id"]]
    assert client.get("/api/sessions/s-none").status_code == 404
    assert client.get(f"/api/sessions/{first['session_id']}/runs").json()["runs"][0]["id"] == (
        first["id"]
    )

    md = client.get(f"/api/sessions/{first['session_id']}/export", params={"format": "md"})
    assert md.status_code == 200 and "attachment" in md.headers["content-disposition"]
    assert md.text.startswith("# Read the animals") and "axolotl" in md.text
    exported = client.get(f"/api/sessions/{first['session_id']}/export?format=json")
    data = json.loads(exported.text)
    assert data["session"]["id"] == first["session_id"]
    assert data["runs"][0]["events"][-1]["type"] == "run_finished"
    assert client.get(f"/api/sessions/{first['session_id']}/export?format=pdf").status_code == 400


def test_resume_and_delete(client: TestClient, workspace: Path, paths: Paths) -> None:
    first = _start(client, workspace, "Start here")
    answer = client.post(f"/api/sessions/{first['session_id']}/resume",
                         json={"task": "go on", "script": _script("Going on.")})
    assert answer.status_code == 201, answer.text
    resumed = answer.json()["run"]
    assert resumed["session_id"] == first["session_id"]
    assert client.post("/api/sessions/s-none/resume", json={"task": "x"}).status_code == 404
    assert client.post(f"/api/sessions/{first['session_id']}/resume", json={}).status_code == 400

    # A run still going, of this process, in another session: not deleted.
    store = Store(paths.database)
    going = store.create_session(str(workspace), "busy")
    store.create_run(run_id="r-busy", session_id=going, workspace=str(workspace), task="busy",
                     model="m", transcript=paths.transcript("r-busy"))
    store.close()
    refused = client.delete(f"/api/sessions/{going}")
    assert refused.status_code == 409 and "running" in refused.json()["error"]

    from tests.web.test_conversation_routes import _finish

    _finish(client, resumed["id"])
    gone = client.delete(f"/api/sessions/{first['session_id']}")
    assert gone.status_code == 200, gone.text
    assert client.get(f"/api/sessions/{first['session_id']}").status_code == 404
    assert client.delete(f"/api/sessions/{first['session_id']}").status_code == 404
    assert not Path(first["transcript"]).exists()
