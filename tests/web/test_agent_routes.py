"""The agents API on the real app: listed with invalid files and their reasons,
a file written only when valid, run now as an ordinary run (shown in the run
list with its agent), stopped, deleted."""

from __future__ import annotations

import time
from pathlib import Path

from starlette.testclient import TestClient

from server.core.paths import Paths
from server.engine.agents.records import BASELINE, AgentRecords
from server.engine.store import Store
from server.web.app import create_app
from tests.web.conftest import BASE, PORT, TOKEN, WS
from tests.web.test_api import wait_finished


def agent_file(workspace: Path, front: str = "", body: str = "Say hello.") -> str:
    return f"---\nworkspace: {workspace}\nmodel: demo\n{front}---\n{body}\n"


def test_agents_written_listed_read_run_and_deleted(
    client: TestClient, workspace: Path, paths: Paths
) -> None:
    assert client.get("/api/agents").json() == {
        "agents": [], "invalid": [], "folder": str(paths.agents)
    }
    # Due once a year: the app's own scheduler starts nothing while the test runs.
    text = agent_file(workspace, 'schedule: "0 4 1 1 *"\n')
    made = client.put("/api/agents/tidy", json={"text": text})
    assert made.status_code == 201
    agent = made.json()["agent"]
    assert agent["name"] == "tidy" and agent["schedule"] == "0 4 1 1 *"
    assert agent["next_run"] % 60 == 0 and agent["last_run"] is None
    assert (paths.agents / "tidy.agent.md").read_text() == text
    (paths.agents / "typo.agent.md").write_text(agent_file(workspace, "modle: x\n"))

    listing = client.get("/api/agents").json()
    assert [a["name"] for a in listing["agents"]] == ["tidy"]
    assert listing["invalid"] == [{
        "name": "typo", "path": str(paths.agents / "typo.agent.md"),
        "reason": listing["invalid"][0]["reason"],
    }]
    assert listing["invalid"][0]["reason"].startswith("unknown key modle")
    read = client.get("/api/agents/typo").json()
    assert read["valid"] is False and read["reason"].startswith("unknown key modle")
    assert client.get("/api/agents/tidy").json() | {"path": ""} == {
        "name": "tidy", "path": "", "text": text, "valid": True, "reason": None
    }

    started = client.post("/api/agents/tidy/run")
    assert started.status_code == 201
    run = started.json()["run"]
    assert run["task"] == "Say hello." and run["workspace"] == str(workspace)
    assert wait_finished(client, run["id"])["status"] == "completed"
    runs = client.get("/api/runs").json()["runs"]
    assert [(r["id"], r["agent"]) for r in runs] == [(run["id"], "tidy")]
    assert client.get(f"/api/runs/{run['id']}").json()["run"]["agent"] == "tidy"
    [session] = client.get("/api/sessions").json()["sessions"]
    assert (session["id"], session["agent"]) == (run["session_id"], "tidy")
    assert client.get(f"/api/sessions/{run['session_id']}").json()["agent"] == "tidy"
    last = client.get("/api/agents").json()["agents"][0]["last_run"]
    assert (last["id"], last["status"], last["trigger"]) == (run["id"], "completed", "hand")

    replaced = client.put("/api/agents/tidy", json={"text": agent_file(workspace)})
    assert replaced.status_code == 200 and replaced.json()["agent"]["schedule"] is None
    assert client.delete("/api/agents/tidy").json() == {"deleted": "tidy"}
    assert client.delete("/api/agents/tidy").status_code == 404
    assert client.get("/api/agents/tidy").status_code == 404


def test_an_invalid_file_is_refused_with_its_reason_and_not_written(
    client: TestClient, workspace: Path, paths: Paths
) -> None:
    good = agent_file(workspace)
    assert client.put("/api/agents/keep", json={"text": good}).status_code == 201
    bad = client.put("/api/agents/keep", json={"text": agent_file(workspace, "autonomy: 2\n")})
    assert bad.status_code == 400
    assert bad.json() == {"error": "the autonomy level must be from 0.0 to 1.0, not 2"}
    assert (paths.agents / "keep.agent.md").read_text() == good  # nothing lost
    assert client.put("/api/agents/keep", json={}).status_code == 400
    named = client.put("/api/agents/bad%20name", json={"text": good})
    assert named.status_code == 400 and "is not an agent name" in named.json()["error"]
    assert client.post("/api/agents/ghost/run").json()["error"].startswith("no agent 'ghost'")
    assert client.post("/api/agents/keep/stop").status_code == 404


def test_the_app_runs_the_scheduler_a_time_missed_while_closed_runs_at_start(
    paths: Paths, workspace: Path
) -> None:
    paths.agents.mkdir(parents=True, exist_ok=True)
    (paths.agents / "catchup.agent.md").write_text(
        agent_file(workspace, 'schedule: "*/5 * * * *"\n')
    )
    store = Store(paths.database)
    AgentRecords(store).claim("catchup", time.time() - 3600, BASELINE)  # last seen an hour ago
    store.close()
    app = create_app(token=TOKEN, port=PORT, paths=paths, demo_delay=0)
    with TestClient(app, base_url=BASE, headers={"authorization": f"Bearer {TOKEN}"}) as client:
        deadline = time.monotonic() + 60
        runs: list[dict[str, object]] = []
        while not runs and time.monotonic() < deadline:
            runs = client.get("/api/runs").json()["runs"]
            time.sleep(0.05)
        assert [r["agent"] for r in runs] == ["catchup"], "the missed time did not run at start"
        last = client.get("/api/agents").json()["agents"][0]["last_run"]
        assert last["trigger"] == "schedule"


def test_an_agent_whose_run_goes_is_not_deleted(
    client: TestClient, workspace: Path, paths: Paths
) -> None:
    # Supervised: the demo's write waits for an answer, so the run goes on.
    text = agent_file(workspace, "mode: supervised\n")
    assert client.put("/api/agents/busy", json={"text": text}).status_code == 201
    run = client.post("/api/agents/busy/run").json()["run"]
    with client.websocket_connect(WS) as ws:
        ws.send_json({"op": "subscribe", "run_id": run["id"]})
        while ws.receive_json()["type"] != "approval_requested":
            pass
    refused = client.delete("/api/agents/busy")
    assert refused.status_code == 409
    assert refused.json() == {
        "error": f"the agent 'busy' is running ({run['id']}): stop it or wait for it "
        "before you delete it"
    }
    assert (paths.agents / "busy.agent.md").read_text() == text
    assert client.post("/api/agents/busy/stop").status_code == 202
    assert wait_finished(client, run["id"])["status"] == "cancelled"
    assert client.delete("/api/agents/busy").json() == {"deleted": "busy"}
    assert not (paths.agents / "busy.agent.md").exists()
