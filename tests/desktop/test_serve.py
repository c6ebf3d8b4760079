"""EmbeddedServer: the real app on 127.0.0.1, in a thread, started and stopped cleanly."""

from __future__ import annotations

import contextlib
import json
import socket
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette

from server.web import serve
from server.web.serve import EmbeddedServer, PortInUseError, ServerStartError
from tests.desktop.sockets import accepts, listening_hosts, need_proc


def get(url: str, token: str | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    embedded = EmbeddedServer()
    embedded.start()
    yield embedded
    embedded.stop()


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_starts_on_a_free_port_and_answers_with_the_token(server: EmbeddedServer) -> None:
    assert 1024 <= server.port <= 65535
    assert server.running
    assert get(f"{server.base_url}/api/health", server.token)[0] == 200
    assert get(f"{server.base_url}/api/health")[0] == 401


def test_urls_and_token(server: EmbeddedServer) -> None:
    assert server.base_url == f"http://127.0.0.1:{server.port}"
    assert server.launch_url == f"{server.base_url}/?token={server.token}"
    assert len(server.token) >= 43  # secrets.token_urlsafe(32)
    assert EmbeddedServer().token != EmbeddedServer().token


def test_a_given_token_is_used() -> None:
    token = "a-token-chosen-by-the-caller-0123456789"
    with EmbeddedServer(token=token) as embedded:
        assert embedded.token == token
        assert get(f"{embedded.base_url}/api/health", token)[0] == 200


def test_binds_the_loopback_address_only(server: EmbeddedServer) -> None:
    need_proc()
    assert listening_hosts(server.port) == {"127.0.0.1"}


def test_a_port_in_use_says_which_and_how_to_fix_it(taken_port: int) -> None:
    with pytest.raises(PortInUseError) as caught:
        EmbeddedServer(port=taken_port).start()
    message = str(caught.value)
    assert caught.value.port == taken_port
    assert str(taken_port) in message
    assert "omit --port" in message


def test_a_port_in_use_by_another_embedded_server(server: EmbeddedServer) -> None:
    with pytest.raises(PortInUseError):
        EmbeddedServer(port=server.port).start()
    assert get(f"{server.base_url}/api/health", server.token)[0] == 200


def test_the_port_given_is_the_port_served() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with EmbeddedServer(port=port) as embedded:
        assert embedded.port == port
        assert get(f"http://127.0.0.1:{port}/api/health", embedded.token)[0] == 200


def test_stop_closes_the_port_and_ends_the_thread() -> None:
    embedded = EmbeddedServer()
    embedded.start()
    port = embedded.port
    assert accepts(port)
    embedded.stop()
    assert not embedded.running
    assert not accepts(port)
    embedded.stop()  # a second stop is harmless
    # The port is free again at once, for a new server on the same port.
    with EmbeddedServer(port=port) as again:
        assert get(f"{again.base_url}/api/health", again.token)[0] == 200


def test_stop_after_a_connection_was_used(server: EmbeddedServer) -> None:
    # A keep-alive connection left open must not hold the shutdown.
    with socket.create_connection(("127.0.0.1", server.port)) as conn:
        request = (
            f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Authorization: Bearer {server.token}\r\n\r\n"
        )
        conn.sendall(request.encode())
        assert conn.recv(65536).startswith(b"HTTP/1.1 200")
        server.stop()
        assert not server.running


def test_stop_before_start_is_harmless() -> None:
    EmbeddedServer().stop()


def test_a_failing_app_startup_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    @contextlib.asynccontextmanager
    async def broken(app: Starlette) -> AsyncIterator[None]:
        raise RuntimeError("no database")
        yield  # pragma: no cover

    def create_app(*, token: str, port: int, paths: Any = None) -> Starlette:
        return Starlette(lifespan=broken)

    monkeypatch.setattr("server.web.app.create_app", create_app)
    embedded = EmbeddedServer()
    with pytest.raises(ServerStartError, match="stopped before it was serving"):
        embedded.start()
    assert not accepts(embedded.port)


def test_the_websocket_implementation_does_not_warn() -> None:
    assert serve._ws_implementation() == "websockets-sansio"


@pytest.mark.parametrize("port", [-1, 65536])
def test_an_impossible_port_is_refused(port: int) -> None:
    with pytest.raises(ValueError, match="port"):
        EmbeddedServer(port=port)


def test_the_socket_says_tcp_so_asyncio_turns_nagle_off() -> None:
    # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP; without
    # it each response on a kept-alive connection waits for a delayed ACK.
    sock = serve._bind_loopback(0)
    with sock:
        assert sock.proto == socket.IPPROTO_TCP


def test_a_request_made_between_bind_and_start_is_answered() -> None:
    # The window's first request may come before the app is up: it waits in the backlog.
    embedded = EmbeddedServer()
    embedded.bind()
    try:
        port = embedded.port
        assert port != 0 and embedded.launch_url.startswith(f"http://127.0.0.1:{port}/")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as early:
            request = (
                f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Authorization: Bearer {embedded.token}\r\nConnection: close\r\n\r\n"
            )
            early.sendall(request.encode())
            embedded.start(wait=False)
            embedded.wait_serving()
            assert early.recv(65536).startswith(b"HTTP/1.1 200")
    finally:
        embedded.stop()


def test_bind_reports_a_port_in_use_before_anything_starts(taken_port: int) -> None:
    embedded = EmbeddedServer(port=taken_port)
    with pytest.raises(PortInUseError):
        embedded.bind()
    embedded.stop()


def test_stop_between_bind_and_start_frees_the_port() -> None:
    embedded = EmbeddedServer()
    embedded.bind()
    port = embedded.port
    embedded.stop()
    assert not accepts(port)
