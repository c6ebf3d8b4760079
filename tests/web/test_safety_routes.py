"""The safety API on the real app: the dial and the mode, the rules, the
emergency stop, and approvals answered over HTTP while only the asking run waits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pygit2
from starlette.testclient import TestClient

from tests.web.conftest import WS

WRITE_TWICE = {
    "turns": [
        {"tool_calls": [{"tool": "write_file", "args": {"path": "a.txt", "content": "1"}}]},
        {"tool_calls": [{"tool": "write_file", "args": {"path": "a.txt", "content": "1"}}]},
        {"text": "done"},
    ]
}


def test_the_dial_and_the_mode_are_one_setting(client: TestClient) -> None:
    start = client.get("/api/safety").json()
    # tests/conftest.py starts every test Autonomous.
    assert (start["mode"], start["band"]) == ("autonomous", "Autonomous")
    assert start["bands"][1] == {"name": "Trusted", "from": 0.34, "to": 0.66}
    moved = client.put("/api/safety", json={"level": 0.5}).json()
    assert (moved["mode"], moved["level"], moved["band"]) == ("trusted", 0.5, "Trusted")
    chosen = client.put("/api/safety", json={"mode": "supervised"}).json()
    assert (chosen["mode"], chosen["level"]) == ("supervised", 0.2)
    plan = client.put("/api/safety", json={"mode": "plan"}).json()
    assert (plan["mode"], plan["level"]) == ("plan", 0.2)  # the dial keeps its value
    assert client.get("/api/safety").json()["mode"] == "plan"
    for bad in ({"level": 1.5}, {"level": "high"}, {"mode": "yolo"}, {"level": True}):
        answer = client.put("/api/safety", json=bad)
        assert answer.status_code == 400 and answer.json()["error"], bad


def test_rules_are_added_listed_edited_and_removed(client: TestClient, workspace: Path) -> None:
    created = client.post(
        "/api/rules",
        json={
            "effect": "allow",
            "spec": "Bash(npm test:*)",
            "scope": "workspace",
            "workspace": str(workspace),
        },
    )
    assert created.status_code == 201
    rule = created.json()["rule"]
    assert (rule["spec"], rule["tool"], rule["pattern"], rule["hits"]) == (
        "Bash(npm test:*)",
        "Bash",
        "npm test:*",
        0,
    )
    listed = client.get("/api/rules", params={"workspace": str(workspace)}).json()["rules"]
    assert [r["id"] for r in listed if r["source"] == "default"] == [
        "default:.git",
        "default:.env",
        "default:.env.local",
        "default:.ssh",
        "default:id_rsa",
        "default:id_ed25519",
    ]
    assert rule["id"] in [r["id"] for r in listed]
    elsewhere = client.get("/api/rules", params={"workspace": "/elsewhere"}).json()["rules"]
    assert rule["id"] not in [r["id"] for r in elsewhere]
    edited = client.put(f"/api/rules/{rule['id']}", json={"effect": "deny"}).json()["rule"]
    assert (edited["effect"], edited["spec"]) == ("deny", "Bash(npm test:*)")
    assert client.delete("/api/rules/default:.env").status_code == 400
    assert client.delete(f"/api/rules/{rule['id']}").json() == {"deleted": rule["id"]}
    assert client.delete(f"/api/rules/{rule['id']}").status_code == 404
    bad = client.post("/api/rules", json={"effect": "allow", "spec": "read"})
    assert bad.status_code == 400 and "no tool is named 'read'" in bad.json()["error"]
    no_ws = client.post(
        "/api/rules", json={"effect": "allow", "spec": "read_file", "scope": "workspace"}
    )
    assert no_ws.status_code == 400


def test_a_deleted_rule_is_restored_as_it_was_in_its_place(
    client: TestClient, workspace: Path
) -> None:
    where = {"workspace": str(workspace)}
    for effect, spec, scope in [
        ("allow", "read_file(docs/**)", "global"),
        ("deny", "run_shell(rm:*)", "workspace"),
        ("ask", "write_file(notes.txt)", "workspace"),
    ]:
        body = {"effect": effect, "spec": spec, "scope": scope, **where}
        assert client.post("/api/rules", json=body).status_code == 201
    before = client.get("/api/rules", params=where).json()["rules"]
    middle = [r for r in before if r["source"] == "user"][1]
    assert client.delete(f"/api/rules/{middle['id']}").status_code == 200

    restored = client.post("/api/rules/restore", json=middle)
    assert restored.status_code == 201, restored.text
    assert restored.json()["rule"] == middle
    assert client.get("/api/rules", params=where).json()["rules"] == before
    # An Undo sent twice restores once.
    assert client.post("/api/rules/restore", json=middle).json()["rule"] == middle
    assert client.get("/api/rules", params=where).json()["rules"] == before

    default = before[0]
    assert default["source"] == "default"
    assert client.post("/api/rules/restore", json=default).status_code == 400
    for bad in (
        {**middle, "id": ""},
        {**middle, "created_at": None},
        {**middle, "created_at": "yesterday"},
        {**middle, "hits": -1},
        {**middle, "hits": 1.5},
        {**middle, "spec": "run_shell("},
    ):
        answer = client.post("/api/rules/restore", json=bad)
        assert answer.status_code == 400 and answer.json()["error"], bad


def test_claude_code_rules_are_imported(client: TestClient, workspace: Path) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],
                    "deny": ["Read(./secrets/**)", "mcp__github"],
                }
            }
        )
    )
    result = client.post("/api/rules/import", json={"workspace": str(workspace)}).json()
    assert [r["spec"] for r in result["imported"]] == ["Read(secrets/**)", "Bash(npm run lint)"]
    assert {r["source"] for r in result["imported"]} == {"claude-settings"}
    assert [s["text"] for s in result["skipped"]] == ["mcp__github", "Read(~/.zshrc)"]
    missing = client.post("/api/rules/import", json={"workspace": str(workspace / "nope")})
    assert missing.status_code == 400


def _events_until(client: TestClient, run_id: str, kind: str) -> list[dict[str, Any]]:
    seen = []
    with client.websocket_connect(WS) as ws:
        ws.send_json({"op": "subscribe", "run_id": run_id})
        while True:
            event = ws.receive_json()
            seen.append(event)
            if event["type"] in (kind, "run_finished"):
                return seen


def test_an_approval_answered_over_http_and_allow_always(
    client: TestClient, workspace: Path
) -> None:
    client.put("/api/safety", json={"mode": "supervised"})
    run = client.post(
        "/api/runs",
        json={"workspace": str(workspace), "task": "t", "model": "script", "script": WRITE_TWICE},
    ).json()["run"]
    # Another run, Autonomous by request, does not wait for this one's answer.
    other = client.post(
        "/api/runs",
        json={"workspace": str(workspace), "task": "t", "model": "demo", "mode": "autonomous"},
    ).json()["run"]
    asked = _events_until(client, run["id"], "approval_requested")[-1]
    assert asked["type"] == "approval_requested" and asked["suggested_rule"] == "write_file(a.txt)"
    assert _events_until(client, other["id"], "run_finished")[-1]["status"] == "completed"
    url = f"/api/runs/{run['id']}/approvals/{asked['call_id']}"
    assert client.get(f"/api/runs/{run['id']}").json()["run"]["waiting"] == 1
    # What a surface that missed the event reads again: the call as the event said it.
    (pending,) = client.get(f"/api/runs/{run['id']}/approvals").json()["approvals"]
    keys = ("run_id", "call_id", "tool", "args", "risk", "reason", "suggested_rule")
    assert {k: pending[k] for k in keys} == {k: asked[k] for k in keys}
    assert pending["expires_at"] == asked["expires_at"]
    assert client.get("/api/runs/r-nope/approvals").status_code == 404
    assert client.post(url, json={"decision": "maybe"}).status_code == 400
    answered = client.post(url, json={"decision": "allow_always", "scope": "workspace"})
    assert answered.json() == {"resolved": {"decision": "allow_always", "scope": "workspace"}}
    assert client.post(url, json={"decision": "deny"}).status_code == 404  # answered already
    events = _events_until(client, run["id"], "run_finished")
    assert events[-1]["status"] == "completed"
    assert client.get(f"/api/runs/{run['id']}").json()["run"]["waiting"] == 0
    assert client.get(f"/api/runs/{run['id']}/approvals").json() == {"approvals": []}
    gates = [e for e in events if e["type"] == "gate_decided"]
    assert [(g["decision"], g["decided_by"]) for g in gates] == [
        ("ask", "autonomy"),
        ("allow", "rule"),
    ]
    rules = client.get("/api/rules", params={"workspace": str(workspace)}).json()["rules"]
    saved = [r for r in rules if r["source"] == "user"]
    assert [(r["spec"], r["scope"], r["hits"]) for r in saved] == [
        ("write_file(a.txt)", "workspace", 1)
    ]


def test_a_deny_message_over_http_reaches_the_model(client: TestClient, workspace: Path) -> None:
    client.put("/api/safety", json={"mode": "supervised"})
    run = client.post(
        "/api/runs",
        json={"workspace": str(workspace), "task": "t", "model": "script", "script": WRITE_TWICE},
    ).json()["run"]
    asked = _events_until(client, run["id"], "approval_requested")[-1]
    client.post(
        f"/api/runs/{run['id']}/approvals/{asked['call_id']}",
        json={"decision": "deny", "message": "not that file"},
    )
    events = _events_until(client, run["id"], "tool_result")
    assert events[-1]["output"] == "denied by web: not that file"
    assert not (workspace / "a.txt").exists()


def test_the_emergency_stop_halts_every_run_and_denies_what_follows(
    client: TestClient, workspace: Path
) -> None:
    client.put("/api/safety", json={"mode": "supervised"})
    runs = [
        client.post(
            "/api/runs",
            json={
                "workspace": str(workspace),
                "task": "t",
                "model": "script",
                "script": WRITE_TWICE,
            },
        ).json()["run"]
        for _ in range(2)
    ]
    for run in runs:
        _events_until(client, run["id"], "approval_requested")
    stopped = client.post("/api/safety/emergency-stop").json()
    assert sorted(stopped["stopped"]) == sorted(r["id"] for r in runs)
    assert stopped["safety"]["mode"] == "emergency-stop"
    for run in runs:
        finished = _events_until(client, run["id"], "run_finished")[-1]
        assert (finished["status"], finished["reason"]) == (
            "cancelled",
            "stopped by the emergency stop",
        )
    # A run cannot start while the stop is on (it would only be denied every call),
    # not even one that asks for a mode of its own.
    for own in ({}, {"mode": "autonomous"}):
        later = client.post(
            "/api/runs", json={"workspace": str(workspace), "task": "t", "model": "demo", **own}
        )
        assert later.status_code == 400
        assert later.json()["error"].startswith("Emergency stop is on: no run can start")
    assert len(client.get("/api/runs").json()["runs"]) == 2


def test_a_sandbox_that_cannot_be_set_up_refuses_the_run_clearly(
    client: TestClient, workspace: Path
) -> None:
    answer = client.post(
        "/api/runs",
        json={"workspace": str(workspace), "task": "t", "sandbox": "worktree"},
    )
    assert answer.status_code == 400
    assert "the worktree sandbox needs a git repository" in answer.json()["error"]
    unknown = client.post(
        "/api/runs", json={"workspace": str(workspace), "task": "t", "sandbox": "docker"}
    )
    assert (
        unknown.status_code == 400 and "local, local-hardened, worktree" in unknown.json()["error"]
    )
    assert client.get("/api/runs").json()["runs"] == []  # nothing half-started


def test_a_worktree_run_says_where_its_work_is_and_leaves_the_folder_alone(
    client: TestClient, workspace: Path
) -> None:
    repo = pygit2.init_repository(str(workspace))
    (workspace / "a.txt").write_text("a\n")
    repo.index.add("a.txt")
    repo.index.write()
    signature = pygit2.Signature("t", "t@example.com")
    repo.create_commit("HEAD", signature, signature, "init", repo.index.write_tree(), [])
    run = client.post(
        "/api/runs",
        json={"workspace": str(workspace), "task": "t", "model": "demo", "sandbox": "worktree"},
    ).json()["run"]
    events = _events_until(client, run["id"], "run_finished")
    assert events[-1]["status"] == "completed"
    note = next(e for e in events if e["type"] == "notice")
    assert f"on the branch sparrow/{run['id']}" in note["text"]
    assert not (workspace / "SPARROW_DEMO.md").exists()
    assert f"sparrow/{run['id']}" in list(pygit2.Repository(str(workspace)).branches.local)
