"""The local server's defences, against a real ``sparrow-desktop --headless`` process."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.e2e.conftest import launch_server

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Served:
    base: str
    port: int
    token: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with launch_server(tmp_path_factory.mktemp("sparrow-home")) as server:
        port = int(server.base_url.rsplit(":", 1)[1])
        yield Served(server.base_url, port, server.launch_url.split("token=", 1)[1])


def request(
    served: Served,
    path: str,
    *,
    token: bool = True,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    all_headers = {"authorization": f"Bearer {served.token}"} if token else {}
    all_headers |= headers or {}
    req = urllib.request.Request(served.base + path, data=body, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def raw_get(port: int, host_header: str) -> int:
    """A GET with an arbitrary Host header, as a DNS-rebinding page would send it."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"GET /api/health HTTP/1.1\r\nHost: {host_header}\r\nConnection: close\r\n\r\n".encode()
        )
        with sock.makefile("rb") as reply:
            status_line = reply.readline().decode()
    return int(status_line.split()[1])


def test_no_token_is_refused(served: Served) -> None:
    for path in ("/", "/api/health", "/api/runs"):
        status, body = request(served, path, token=False)
        assert status == 401 and "token" in json.loads(body)["error"]
    assert request(served, "/api/health")[0] == 200


def test_a_foreign_host_is_refused(served: Served) -> None:
    assert raw_get(served.port, "evil.example") == 403
    assert raw_get(served.port, f"evil.example:{served.port}") == 403
    assert (
        raw_get(served.port, f"127.0.0.1:{served.port}") == 401
    )  # right host, still needs the token


def test_a_websocket_from_a_foreign_origin_is_refused(served: Served) -> None:
    uri = f"ws://127.0.0.1:{served.port}/ws?token={served.token}"
    with pytest.raises(InvalidStatus) as refused, connect(uri, origin="http://evil.example"):  # type: ignore[arg-type]
        pass
    assert refused.value.response.status_code == 403
    with connect(uri, origin=f"http://127.0.0.1:{served.port}") as ws:  # type: ignore[arg-type]
        ws.send(json.dumps({"op": "subscribe", "run_id": "nope"}))
        assert json.loads(ws.recv(timeout=10))["type"] == "error"


def test_a_cross_site_post_is_refused(served: Served, tmp_path: Path) -> None:
    body = json.dumps({"workspace": str(tmp_path), "task": "t"}).encode()
    status, _ = request(
        served,
        "/api/runs",
        method="POST",
        body=body,
        headers={"origin": "http://evil.example", "content-type": "application/json"},
    )
    assert status == 403


def _listeners(port: int) -> set[str]:
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.add(address)
    return found


def test_it_listens_on_loopback_only(served: Served) -> None:
    assert _listeners(served.port) == {"0100007F"}  # 127.0.0.1, nothing on 0.0.0.0 or ::
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))  # no packet is sent: this only picks a local address
        own_address = probe.getsockname()[0]
    if own_address != "127.0.0.1":
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((own_address, served.port), timeout=2).close()


def test_bad_input_gets_clear_errors_and_the_server_keeps_serving(
    served: Served, tmp_path: Path
) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    cases = [
        (b"{broken", "not valid JSON"),
        (
            json.dumps({"workspace": str(tmp_path / "missing"), "task": "t"}).encode(),
            "workspace not found",
        ),
        (json.dumps({"workspace": str(a_file), "task": "t"}).encode(), "is a file, not a folder"),
    ]
    for body, message in cases:
        status, text = request(
            served,
            "/api/runs",
            method="POST",
            body=body,
            headers={"content-type": "application/json"},
        )
        assert status == 400 and message in json.loads(text)["error"]
    assert request(served, "/api/health")[0] == 200
