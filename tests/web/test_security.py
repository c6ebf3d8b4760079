"""The loopback guard, in-process; tests/e2e/test_server_security.py repeats the
essentials against a real server process."""

from pathlib import Path

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from server.core.paths import Paths
from server.web.app import create_app
from server.web.security import LoopbackGuard
from server.web.serve import EmbeddedServer
from tests.web.conftest import BASE, PORT, TOKEN, WS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_no_token_is_401_everywhere(anonymous: TestClient) -> None:
    for url in ("/", "/api/health", "/api/runs", "/js/main.js"):
        response = anonymous.get(url)
        assert response.status_code == 401, url
    assert anonymous.post("/api/runs", json={}).status_code == 401


def test_a_wrong_token_is_401(anonymous: TestClient) -> None:
    assert anonymous.get("/api/health", headers={"authorization": "Bearer nope"}).status_code == 401
    assert anonymous.get("/?token=nope", follow_redirects=False).status_code == 401


def test_the_launch_url_trades_the_token_for_a_port_scoped_cookie(anonymous: TestClient) -> None:
    response = anonymous.get(f"/?token={TOKEN}", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"sparrow_token_{PORT}={TOKEN}")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    anonymous.cookies.set(f"sparrow_token_{PORT}", TOKEN)
    assert anonymous.get("/api/health").status_code == 200


def test_the_launch_url_is_what_the_readme_says(anonymous: TestClient, paths: Paths) -> None:
    # Not one-time: the window's reloads ride on the cookie, but a second browser
    # (or one that lost its cookie) opens the same address again.
    words = " ".join(README.split())
    assert "one-time" not in words
    assert "a secret made at each launch, valid until the app quits" in words
    assert "trades it for an HttpOnly cookie" in words
    assert "works every time while the app runs" in words
    for _ in range(2):
        anonymous.cookies.clear()
        response = anonymous.get(f"/?token={TOKEN}", follow_redirects=False)
        assert response.status_code == 303 and "HttpOnly" in response.headers["set-cookie"]
    # The next launch makes a new one, and the old address opens nothing there.
    assert EmbeddedServer().token != EmbeddedServer().token
    relaunched = create_app(token="the-next-launch-0123456789", port=PORT, paths=paths)
    with TestClient(relaunched, base_url=BASE) as browser:
        assert browser.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 401


@pytest.mark.parametrize(
    "host", ["evil.example", f"evil.example:{PORT}", "127.0.0.1", "127.0.0.1:1", f"0.0.0.0:{PORT}"]
)
def test_foreign_hosts_are_refused_even_with_the_token(client: TestClient, host: str) -> None:
    assert client.get("/api/health", headers={"host": host}).status_code == 403


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "null", f"http://127.0.0.1:{PORT + 1}", f"https://127.0.0.1:{PORT}"],
)
def test_foreign_origins_are_refused(client: TestClient, origin: str) -> None:
    response = client.post("/api/runs", json={}, headers={"origin": origin})
    assert response.status_code == 403
    with (
        pytest.raises(WebSocketDisconnect),
        client.websocket_connect(WS, headers={"origin": origin}),
    ):
        pass


def test_own_origin_is_accepted(client: TestClient) -> None:
    for origin in (f"http://127.0.0.1:{PORT}", f"http://localhost:{PORT}"):
        assert client.get("/api/health", headers={"origin": origin}).status_code == 200


def test_websocket_needs_the_token(anonymous: TestClient) -> None:
    with pytest.raises(WebSocketDisconnect), anonymous.websocket_connect(WS):
        pass
    with anonymous.websocket_connect(f"{WS}?token={TOKEN}") as ws:
        ws.send_json({"op": "subscribe", "run_id": "*"})


def test_a_short_token_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="too short"):
        LoopbackGuard(lambda s, r, w: None, token="short", port=1)  # type: ignore[arg-type,return-value]
