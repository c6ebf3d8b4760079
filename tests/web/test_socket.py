from pathlib import Path

from starlette.testclient import TestClient

from tests.web.conftest import WS


def test_a_late_subscriber_gets_the_history_then_nothing_twice(
    client: TestClient, workspace: Path
) -> None:
    run = client.post("/api/runs", json={"workspace": str(workspace), "task": "demo"}).json()["run"]
    with client.websocket_connect(WS) as first:
        first.send_json({"op": "subscribe", "run_id": run["id"]})
        while first.receive_json()["type"] != "run_finished":
            pass
    with client.websocket_connect(WS) as late:
        late.send_json({"op": "subscribe", "run_id": run["id"]})
        events = []
        while not events or events[-1]["type"] != "run_finished":
            events.append(late.receive_json())
    seqs = [e["seq"] for e in events]
    assert seqs[0] == 1 and seqs == sorted(set(seqs))
    assert {e["type"] for e in events} >= {
        "run_started",
        "text_delta",
        "tool_requested",
        "tool_result",
    }


def test_a_socket_following_one_run_gets_no_event_of_another(
    client: TestClient, workspace: Path
) -> None:
    first = client.post("/api/runs", json={"workspace": str(workspace), "task": "a"}).json()["run"]
    with client.websocket_connect(WS) as ws:
        ws.send_json({"op": "subscribe", "run_id": first["id"]})
        client.post("/api/runs", json={"workspace": str(workspace), "task": "b"})
        events = []
        while not events or events[-1]["type"] != "run_finished":
            events.append(ws.receive_json())
    assert {e["run_id"] for e in events} == {first["id"]}
    assert events[0]["type"] == "run_started"


def test_subscribing_to_all_runs_follows_new_ones(client: TestClient, workspace: Path) -> None:
    with client.websocket_connect(WS) as ws:
        ws.send_json({"op": "subscribe", "run_id": "*"})
        ws.send_json({"op": "subscribe", "run_id": "r-unknown"})
        assert ws.receive_json() == {"type": "error", "error": "no such run: r-unknown"}
        run = client.post("/api/runs", json={"workspace": str(workspace), "task": "demo"}).json()[
            "run"
        ]
        first = ws.receive_json()
        assert (first["type"], first["run_id"]) == ("run_started", run["id"])


def test_malformed_commands_get_an_error_and_the_socket_stays_open(client: TestClient) -> None:
    with client.websocket_connect(WS) as ws:
        ws.send_text("not json")
        assert ws.receive_json()["type"] == "error"
        ws.send_json({"op": "dance", "run_id": "x"})
        assert ws.receive_json() == {"type": "error", "error": "unknown op 'dance'"}
