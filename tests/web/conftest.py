"""The real app in-process, over the TestClient's ASGI transport, on the host
and port the loopback guard expects."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from server.core.paths import Paths
from server.web.app import create_app

TOKEN = "test-token-0123456789abcdef"
PORT = 48123
BASE = f"http://127.0.0.1:{PORT}"
WS = f"ws://127.0.0.1:{PORT}/ws"


@pytest.fixture
def client(paths: Paths) -> Iterator[TestClient]:
    app = create_app(token=TOKEN, port=PORT, paths=paths, demo_delay=0)
    with TestClient(
        app, base_url=BASE, headers={"authorization": f"Bearer {TOKEN}"}
    ) as test_client:
        yield test_client


@pytest.fixture
def anonymous(paths: Paths) -> Iterator[TestClient]:
    app = create_app(token=TOKEN, port=PORT, paths=paths, demo_delay=0)
    with TestClient(app, base_url=BASE) as test_client:
        yield test_client
