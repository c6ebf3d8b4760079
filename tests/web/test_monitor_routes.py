"""``GET /api/monitor`` and ``/ws/monitor`` on the real app: the session monitor
watches temporary folders (``session_folders``) with real transcripts in them;
a live server shows that shutting down stops it with a monitor socket open."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from server.core.paths import Paths
from server.engine.handoff import HandoffDoc
from server.monitor.reading import SessionReading
from server.web import app as app_module
from server.web.app import create_app
from server.web.serve import EmbeddedServer
from tests.monitor import transcripts as t
from tests.web.conftest import BASE, PORT, TOKEN, SessionFolders, now
from tests.web.test_monitor_feed import RecordingFeed

MONITOR_WS = BASE.replace("http", "ws") + "/ws/monitor"
Message = dict[str, Any]


@pytest.fixture
def fast_config(paths: Paths) -> Paths:
    """Poll often: the tests wait for polls (never with a sleep)."""
    paths.config_file.write_text("[monitor]\npoll_seconds = 0.05\n")
    return paths


@pytest.fixture
def watching(fast_config: Paths) -> Iterator[TestClient]:
    app = create_app(token=TOKEN, port=PORT, paths=fast_config, demo_delay=0)
    with TestClient(app, base_url=BASE, headers={"authorization": f"Bearer {TOKEN}"}) as client:
        yield client


def receive_until(ws: Any, done: Callable[[Message], bool]) -> tuple[Message, list[Message]]:
    """Messages until one satisfies ``done``: that one, and every one received."""
    seen: list[Message] = []
    while True:
        message = ws.receive_json()
        seen.append(message)
        if done(message):
            return message, seen


def sessions(message: Message) -> list[Message]:
    return message["sessions"] if message["type"] == "monitor_sessions" else []


def test_no_sessions_says_where_it_looks(
    watching: TestClient, session_folders: SessionFolders
) -> None:
    state = watching.get("/api/monitor").json()
    assert state == {
        "sessions": [],
        "roots": [
            {"tool": "claude-code", "path": str(session_folders.claude / "projects")},
            {"tool": "codex", "path": str(session_folders.codex / "sessions")},
        ],
        "active_within_hours": 24.0,
        "settings_error": None,
    }
    with watching.websocket_connect(MONITOR_WS) as ws:
        assert ws.receive_json() == {"type": "monitor_sessions", **state}


def test_sessions_come_most_urgent_first_and_all_at_once(
    fast_config: Paths, session_folders: SessionFolders
) -> None:
    t.write(
        session_folders.claude_session("-home-ada-calm", "s-ok"),
        t.context_line(20_000, "m1", ts=now()),
    )
    t.write(
        session_folders.claude_session("-home-ada-busy", "s-critical"),
        t.context_line(140_000, "m1", ts=now(5)),
    )
    t.write(
        t.codex_file(session_folders.codex),
        t.codex_meta(ts=now(9)),
        t.codex_turn(ts=now(9)),
        t.codex_tokens(150_000, ts=now(8)),
    )
    app = create_app(token=TOKEN, port=PORT, paths=fast_config, demo_delay=0)
    with (
        TestClient(app, base_url=BASE, headers={"authorization": f"Bearer {TOKEN}"}) as client,
        client.websocket_connect(MONITOR_WS) as ws,
    ):
        # Three sessions found by one poll make one message, not three.
        found, _ = receive_until(ws, lambda m: bool(sessions(m)))
        assert len(found["sessions"]) == 3
        body = client.get("/api/monitor").json()
    listed = body["sessions"]
    assert [(s["tool"], s["level"]) for s in listed] == [
        ("claude-code", "critical"),
        ("codex", "warning"),
        ("claude-code", "ok"),
    ]
    assert listed == found["sessions"]
    critical, codex = listed[0], listed[1]
    assert set(critical) == set(reading_keys())
    assert (critical["session_id"], critical["context_tokens"], critical["window"]) == (
        "s-critical",
        140_000,
        200_000,
    )
    assert (critical["warning_at"], critical["critical_at"]) == (100_000, 130_000)
    assert (codex["model"], codex["window"], codex["project"]) == (
        t.CODEX_MODEL,
        t.CODEX_WINDOW,
        t.CWD,
    )


def reading_keys() -> list[str]:
    return list(
        SessionReading(
            tool="codex",
            session_id="x",
            path="/x",
            project="/",
            model=None,
            context_tokens=None,
            window=1,
            percent=None,
            level="unknown",
            level_source="none",
            warning_at=1,
            critical_at=1,
            last_activity=0.0,
            tool_calls=0,
            after_compaction=False,
        ).to_dict()
    )


def test_an_append_is_pushed_with_its_level_crossing(
    watching: TestClient, session_folders: SessionFolders
) -> None:
    path = t.write(
        session_folders.claude_session("-home-ada-engine", "s-live"),
        t.user("go", ts=now(3)),
        t.context_line(60_000, "m1", ts=now(2)),
    )
    with watching.websocket_connect(MONITOR_WS) as ws:
        receive_until(ws, lambda m: any(s["context_tokens"] == 60_000 for s in sessions(m)))
        t.append(path, t.context_line(150_000, "m2", ts=now()))
        # (The first poll's snapshot may still come first: it says the same as the one on connect.)
        pushed, _ = receive_until(ws, lambda m: any(s["level"] != "ok" for s in sessions(m)))
        [live] = pushed["sessions"]
        assert (live["context_tokens"], live["level"]) == (150_000, "critical")
        assert [tokens for _, tokens in live["trend"]] == [60_000, 150_000]
        # The crossing follows the snapshot that shows it.
        crossed = ws.receive_json()
    assert crossed["type"] == "monitor_level"
    assert (crossed["key"], crossed["level"], crossed["previous"]) == (
        str(path),
        "critical",
        "ok",
    )
    assert (crossed["rising"], crossed["initial"]) == (True, False)
    assert crossed["reading"] == live


def test_a_client_that_asks_gets_the_kept_crossings_after_the_first_state(
    watching: TestClient, session_folders: SessionFolders
) -> None:
    path = t.write(
        session_folders.claude_session("-home-ada-engine", "s-live"),
        t.context_line(60_000, "m1", ts=now(2)),
    )
    with watching.websocket_connect(MONITOR_WS) as ws:
        receive_until(ws, lambda m: any(s["context_tokens"] == 60_000 for s in sessions(m)))
        t.append(path, t.context_line(150_000, "m2", ts=now()))
        receive_until(ws, lambda m: m["type"] == "monitor_level")
    with watching.websocket_connect(MONITOR_WS + "?levels=kept") as late:
        first, kept = late.receive_json(), late.receive_json()
    assert first["type"] == "monitor_sessions"
    assert (kept["type"], kept["number"], kept["level"]) == ("monitor_level", 1, "critical")
    with watching.websocket_connect(MONITOR_WS) as plain:
        assert plain.receive_json()["type"] == "monitor_sessions"
        plain.send_text("ping")  # the socket ignores it; a crossing would come first
    assert watching.get("/api/monitor").json()["sessions"][0]["level"] == "critical"


def test_a_deleted_transcript_leaves_the_list(
    watching: TestClient, session_folders: SessionFolders
) -> None:
    path = t.write(
        session_folders.claude_session("-p", "s-gone"), t.context_line(9_000, "m", ts=now())
    )
    with watching.websocket_connect(MONITOR_WS) as ws:
        receive_until(ws, lambda m: bool(sessions(m)))
        path.unlink()
        receive_until(ws, lambda m: m["type"] == "monitor_sessions" and not m["sessions"])
    assert watching.get("/api/monitor").json()["sessions"] == []


def test_the_socket_ignores_what_it_is_sent(watching: TestClient) -> None:
    with watching.websocket_connect(MONITOR_WS) as ws:
        assert ws.receive_json()["type"] == "monitor_sessions"
        ws.send_text("not a command")
        ws.send_json({"op": "subscribe", "run_id": "*"})
    assert watching.get("/api/health").status_code == 200


def test_the_monitor_routes_are_behind_the_guard(anonymous: TestClient) -> None:
    assert anonymous.get("/api/monitor").status_code == 401
    with pytest.raises(WebSocketDisconnect), anonymous.websocket_connect(MONITOR_WS):
        pass
    with (
        pytest.raises(WebSocketDisconnect),
        anonymous.websocket_connect(
            f"{MONITOR_WS}?token={TOKEN}", headers={"origin": "http://evil.example"}
        ),
    ):
        pass
    with anonymous.websocket_connect(f"{MONITOR_WS}?token={TOKEN}") as ws:
        assert ws.receive_json()["type"] == "monitor_sessions"


@pytest.mark.parametrize(
    ("toml", "problem"),
    [
        ('[monitor]\npoll_seconds = "often"\n', "expected float"),
        ('[monitor.windows]\n"claude-x" = -5\n', "expected a number of tokens"),
    ],
)
def test_a_broken_monitor_setting_falls_back_to_the_defaults(
    paths: Paths, workspace: Path, toml: str, problem: str
) -> None:
    paths.config_file.write_text(toml)
    app = create_app(token=TOKEN, port=PORT, paths=paths, demo_delay=0)
    with TestClient(app, base_url=BASE, headers={"authorization": f"Bearer {TOKEN}"}) as client:
        state = client.get("/api/monitor").json()
        assert problem in state["settings_error"]
        assert state["active_within_hours"] == 24.0
        assert client.get("/api/health").json()["ok"] is True


def closing_of(ws: ClientConnection) -> ConnectionClosed:
    try:
        while True:
            ws.recv(timeout=10)
    except ConnectionClosed as closed:
        return closed


def test_shutdown_stops_the_monitor_with_a_socket_open(
    monkeypatch: pytest.MonkeyPatch, fast_config: Paths, session_folders: SessionFolders
) -> None:
    """On a real server (uvicorn in a thread): stopping it closes the monitor's
    socket, cancels the polling, and unsubscribes the feed from the monitor."""
    monkeypatch.setattr(app_module, "MonitorFeed", RecordingFeed)
    RecordingFeed.made.clear()
    path = t.write(
        session_folders.claude_session("-p", "s-1"), t.context_line(50_000, "m1", ts=now())
    )
    server = EmbeddedServer(paths=fast_config)
    server.start()
    try:
        url = f"ws://127.0.0.1:{server.port}/ws/monitor?token={server.token}"
        with connect(url, open_timeout=10) as ws:
            while not json.loads(ws.recv(timeout=10))["sessions"]:
                pass
            server.stop()  # raises TimeoutError if the app does not stop
            closed = closing_of(ws)
    finally:
        server.stop()
    assert closed.rcvd is not None and closed.rcvd.code == 1012  # "service restart"
    [feed] = RecordingFeed.made
    heard = feed.heard
    t.append(path, t.context_line(150_000, "m2", ts=now()))
    assert feed.monitor.poll(), "the monitor sees the change when asked"
    assert feed.heard == heard, "the stopped feed still listens to the monitor"


# --- POST /api/monitor/sessions/handoff -------------------------------------------------


def live_key(client: TestClient, path: Path) -> str:
    """The session's key once the monitor lists it (polled often: no sleep)."""
    with client.websocket_connect(MONITOR_WS) as ws:
        receive_until(ws, lambda m: any(s["key"] == str(path) for s in sessions(m)))
    return str(path)


def test_a_handoff_doc_of_a_live_session_goes_to_its_folder(
    watching: TestClient, session_folders: SessionFolders, tmp_path: Path
) -> None:
    project = tmp_path / "engine"
    project.mkdir()
    path = t.write(
        session_folders.claude_session("-engine", "s-hot"),
        *t.claude_work(str(project), tokens=140_000, ts=now()),
    )
    key = live_key(watching, path)
    answer = watching.post("/api/monitor/sessions/handoff", json={"key": key})
    assert answer.status_code == 200, answer.text
    written = Path(answer.json()["path"])
    assert written.parent == project / ".sparrow" / "handoff"
    doc = HandoffDoc.parse(written.read_text(encoding="utf-8"))
    assert doc.files_modified == ["src/queue.py", "src/shim.py", "/elsewhere/notes.md"]
    assert doc.tests_run == ["pytest -q tests/test_queue.py"]
    assert doc.context == f"ctx 70% · 140,000 of 200,000 tokens · level critical · {t.MODEL}"
    # With a task of its own.
    again = watching.post("/api/monitor/sessions/handoff", json={"key": key, "task": "ship it"})
    assert HandoffDoc.parse(Path(again.json()["path"]).read_text(encoding="utf-8")).task == (
        "ship it"
    )


def test_a_handoff_needs_a_live_session_and_its_folder(
    watching: TestClient, session_folders: SessionFolders, tmp_path: Path
) -> None:
    route = "/api/monitor/sessions/handoff"
    # Any path is not a key: only the sessions listed now are.
    stray = t.write(tmp_path / "elsewhere.jsonl", *t.claude_work(str(tmp_path), ts=now()))
    missing = watching.post(route, json={"key": str(stray)})
    assert missing.status_code == 404 and "no live session" in missing.json()["error"]
    assert watching.post(route, json={}).status_code == 400
    assert watching.post(route, content=b"not json").status_code == 400
    assert watching.post(route, json={"key": "x", "task": 5}).status_code == 400
    gone = tmp_path / "deleted-project"
    path = t.write(
        session_folders.claude_session("-deleted", "s-gone"), *t.claude_work(str(gone), ts=now())
    )
    refused = watching.post(route, json={"key": live_key(watching, path)})
    assert refused.status_code == 409
    assert "the session's folder is not there" in refused.json()["error"]
    assert not gone.exists()


def test_the_handoff_route_is_behind_the_guard(anonymous: TestClient) -> None:
    answer = anonymous.post("/api/monitor/sessions/handoff", json={"key": "x"})
    assert answer.status_code == 401
