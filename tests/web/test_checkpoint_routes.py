"""The checkpoint routes over the real app: a scripted run that writes files,
its checkpoints, their diffs, and a rewind (and the refusals)."""

from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from tests.web.conftest import WS
from tests.web.test_api import wait_finished


def _write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "write_file", "args": {"path": path, "content": content}}]}


def _scripted_run(client: TestClient, workspace: Path) -> str:
    script = {"turns": [_write("a.txt", "one\n"), _write("a.txt", "two\n"), {"text": "done"}]}
    run = client.post(
        "/api/runs",
        json={"workspace": str(workspace), "task": "t", "model": "script", "script": script},
    ).json()["run"]
    assert wait_finished(client, run["id"])["status"] == "completed"
    return str(run["id"])


def test_a_runs_checkpoints_newest_first(client: TestClient, workspace: Path) -> None:
    run_id = _scripted_run(client, workspace)
    response = client.get(f"/api/runs/{run_id}/checkpoints")
    assert response.status_code == 200
    checkpoints = response.json()["checkpoints"]
    assert len(checkpoints) == 2
    assert [c["turn"] for c in checkpoints] == [2, 1]
    assert all(c["run_id"] == run_id and c["tool"] == "write_file" for c in checkpoints)
    assert checkpoints[0]["workspace"] == str(workspace.resolve())


def test_diff_to_the_workspace_and_between_checkpoints(client: TestClient, workspace: Path) -> None:
    run_id = _scripted_run(client, workspace)
    newest, oldest = client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
    # The first checkpoint was taken before a.txt existed.
    files = client.get(f"/api/checkpoints/{oldest['id']}/diff").json()["files"]
    assert [(f["path"], f["status"]) for f in files] == [("a.txt", "added")]
    assert "+two" in files[0]["patch"]
    between = client.get(f"/api/checkpoints/{oldest['id']}/diff?to={newest['id']}").json()
    assert [(f["path"], f["status"]) for f in between["files"]] == [("a.txt", "added")]
    assert "+one" in between["files"][0]["patch"]


def test_rewind_restores_and_can_be_undone(client: TestClient, workspace: Path) -> None:
    run_id = _scripted_run(client, workspace)
    newest = client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"][0]
    (workspace / "b.txt").write_text("new\n")
    response = client.post(f"/api/checkpoints/{newest['id']}/rewind")
    assert response.status_code == 200
    rewind = response.json()["rewind"]
    assert rewind["restored"] == ["a.txt"] and rewind["removed"] == ["b.txt"]
    assert (workspace / "a.txt").read_text() == "one\n"
    assert not (workspace / "b.txt").exists()
    undo = rewind["checkpoint_before"]["id"]
    # The undo point is on the run's own timeline.
    timeline = client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
    assert (timeline[0]["id"], timeline[0]["tool"]) == (undo, "rewind")
    assert client.post(f"/api/checkpoints/{undo}/rewind").status_code == 200
    assert (workspace / "a.txt").read_text() == "two\n"
    assert (workspace / "b.txt").read_text() == "new\n"


def test_unknown_ids_are_404(client: TestClient) -> None:
    for method, url in (
        ("GET", "/api/runs/r-x/checkpoints"),
        ("GET", "/api/checkpoints/c-x/diff"),
        ("POST", "/api/checkpoints/c-x/rewind"),
    ):
        response = client.request(method, url)
        assert response.status_code == 404, url
        assert "error" in response.json()


def test_diff_to_an_unknown_checkpoint_is_404(client: TestClient, workspace: Path) -> None:
    run_id = _scripted_run(client, workspace)
    first = client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"][0]
    response = client.get(f"/api/checkpoints/{first['id']}/diff?to=c-x")
    assert response.status_code == 404


def test_rewind_is_refused_while_a_run_works_on_the_workspace(
    client: TestClient, workspace: Path
) -> None:
    run_id = _scripted_run(client, workspace)
    first = client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"][0]
    script = {"turns": [{"tool_calls": [{"tool": "run_shell", "args": {"command": "sleep 30"}}]}]}
    live = client.post(
        "/api/runs",
        json={"workspace": str(workspace), "task": "t", "model": "script", "script": script},
    ).json()["run"]
    with client.websocket_connect(WS) as ws:
        ws.send_json({"op": "subscribe", "run_id": live["id"]})
        while ws.receive_json()["type"] != "tool_requested":
            pass
        response = client.post(f"/api/checkpoints/{first['id']}/rewind")
        assert response.status_code == 409
        assert live["id"] in response.json()["error"]
        client.post(f"/api/runs/{live['id']}/cancel")
        while ws.receive_json()["type"] != "run_finished":
            pass
    assert (workspace / "a.txt").read_text() == "two\n"
