"""The canary: a fake key in the keyring and another in the environment. A run
(whose model tries to repeat a key, and whose tool tries to print one), a run
that fails with 401, and the settings API leave neither key anywhere on disk
under SPARROW_HOME or the workspace, in any event, or on stderr."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from server.core import credentials
from server.core.paths import Paths
from server.web.app import create_app
from tests.conftest import require
from tests.fakes.script import Call, Failure, Reply
from tests.fakes.vendors import FakeVendor
from tests.web.conftest import BASE, PORT, TOKEN, WS

IN_KEYRING = "sk-ant-api03-CANARYkeyring0123456789abcdefXYZ"
IN_ENV = "sk-proj-CANARYenvironment0123456789abcdefXYZ"


@pytest.fixture
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor() as fake:
        yield fake


@pytest.fixture
def client(
    paths: Paths, vendor: FakeVendor, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    require("a Secret Service (run the tests through scripts/test-session.sh)",
            credentials.keyring_status().ok)
    monkeypatch.setenv("OPENAI_API_KEY", IN_ENV)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", vendor.base_url)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{vendor.base_url}/v1")
    app = create_app(token=TOKEN, port=PORT, paths=paths, demo_delay=0)
    with TestClient(app, base_url=BASE, headers={"authorization": f"Bearer {TOKEN}"}) as test:
        yield test
    credentials.remove_key("anthropic")


def _finish(client: TestClient, run_id: str) -> list[dict[str, Any]]:
    seen = []
    with client.websocket_connect(WS) as ws:
        ws.send_json({"op": "subscribe", "run_id": run_id})
        while True:
            seen.append(ws.receive_json())
            if seen[-1]["type"] == "run_finished":
                return seen


def test_no_key_leaks_from_a_run_a_failing_run_or_the_settings(
    client: TestClient,
    vendor: FakeVendor,
    workspace: Path,
    sparrow_home: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    # The settings: a key set, listed, tested.
    put = client.put("/api/providers/anthropic/key", json={"key": IN_KEYRING})
    assert put.status_code == 200, put.text
    answers = [put.text, client.get("/api/models?refresh=1").text]
    answers.append(client.post("/api/providers/openai/test").text)
    assert put.json()["provider"]["key"] == {
        "state": "keyring", "masked": "…fXYZ", "env": "ANTHROPIC_API_KEY"
    }

    # A run whose model repeats both keys and asks a tool to print the environment's.
    vendor.script(
        Reply(text=f"Your keys are {IN_KEYRING} and {IN_ENV}. Checking:",
              calls=(Call("run_shell", {"command": f"echo {IN_ENV}; env"}),)),
        Reply(text=f"Done; the key {IN_KEYRING} works."),
    )
    run = client.post("/api/runs", json={
        "workspace": str(workspace), "task": f"use {IN_KEYRING}",
        "model": "anthropic:fake-model",
    }).json()["run"]
    events = _finish(client, run["id"])
    assert events[-1]["status"] == "completed", events[-1]
    # The key did reach the vendor: it is the one place it must go.
    headers = vendor.last("/v1/messages").headers
    assert IN_KEYRING in (headers.get("x-api-key"), headers.get("authorization", "")[7:])

    # A run that fails: the vendor refuses the environment's key.
    vendor.script(Failure(401, f"Incorrect API key provided: {IN_ENV}"))
    failed = client.post("/api/runs", json={
        "workspace": str(workspace), "task": "hello", "model": "openai:fake-model",
    }).json()["run"]
    failed_events = _finish(client, failed["id"])
    assert failed_events[-1]["status"] == "failed"
    assert "refused the API key (the key from OPENAI_API_KEY) (401)" in (
        failed_events[-1]["reason"]
    )

    everything = [str(events), str(failed_events), *answers]
    for r in (run, failed):
        everything.append(client.get(f"/api/runs/{r['id']}/events").text)
        everything.append(client.get(f"/api/runs/{r['id']}/requests/1").text)
    out, err = capfd.readouterr()
    for key in (IN_KEYRING, IN_ENV):
        holding = [
            str(p) for f in (sparrow_home, workspace) for p in f.rglob("*")
            if p.is_file() and key.encode() in p.read_bytes()
        ]
        assert holding == []
        assert key[8:30] not in "".join(everything)
        assert key not in out + err
    assert "[redacted]" in str(events)
