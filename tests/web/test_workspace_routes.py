"""``GET /api/workspace/paths`` on the real app: ranked suggestions from a real
tree, what .gitignore ignores left out, and bad input refused in one line."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from server.core.paths import Paths


def ask(client: TestClient, **params: str) -> Any:
    # The first build may outlast the route's short wait: ask until it is ready.
    deadline = time.monotonic() + 60
    while True:
        answer = client.get("/api/workspace/paths", params=params)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        if body["ready"]:
            return body
        assert time.monotonic() < deadline, "the index was never ready"
        time.sleep(0.1)


def test_suggestions_ranked_and_ignored_paths_left_out(client: TestClient, workspace: Path) -> None:
    for name in ["src/main.py", "src/lib/domain.py", "dist/main.py", "main.log", "docs/a.md"]:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("x")
    (workspace / ".gitignore").write_text("dist/\n*.log\n")
    body = ask(client, workspace=str(workspace), q="mai", limit="5")
    assert body["workspace"] == str(workspace.resolve())
    assert body["paths"] == [
        {"path": "src/main.py", "kind": "file"},
        {"path": "src/lib/domain.py", "kind": "file"},
    ]
    folders = ask(client, workspace=str(workspace), q="do")["paths"]
    assert folders[0] == {"path": "docs/", "kind": "dir"}
    assert len(ask(client, workspace=str(workspace), q="", limit="2")["paths"]) == 2


def test_bad_input_is_a_400_with_the_reason(
    client: TestClient, workspace: Path, paths: Paths
) -> None:
    missing = client.get("/api/workspace/paths", params={"workspace": str(workspace / "nope")})
    assert missing.status_code == 400
    assert "workspace not found" in missing.json()["error"]
    assert client.get("/api/workspace/paths").status_code == 400
    for bad in ("0", "x", "1000"):
        answer = client.get(
            "/api/workspace/paths", params={"workspace": str(workspace), "limit": bad}
        )
        assert answer.status_code == 400
        assert "'limit'" in answer.json()["error"]
    own = client.get("/api/workspace/paths", params={"workspace": str(paths.state)})
    assert own.status_code == 400
    assert "Sparrow's own folders" in own.json()["error"]


def test_the_route_needs_the_token(anonymous: TestClient, workspace: Path) -> None:
    answer = anonymous.get("/api/workspace/paths", params={"workspace": str(workspace)})
    assert answer.status_code == 401
