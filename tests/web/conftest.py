"""The real app in-process, over the TestClient's ASGI transport, on the host
and port the loopback guard expects."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

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


@pytest.fixture(autouse=True)
def session_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SessionFolders:
    """Where the app's session monitor looks: temporary folders, never the user's
    own ``~/.claude`` or ``~/.codex`` (discovery reads these variables)."""
    folders = SessionFolders(claude=tmp_path / "claude", codex=tmp_path / "codex")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folders.claude))
    monkeypatch.setenv("CODEX_HOME", str(folders.codex))
    return folders


@dataclass(frozen=True)
class SessionFolders:
    claude: Path  # $CLAUDE_CONFIG_DIR: transcripts in projects/<escaped-cwd>/<id>.jsonl
    codex: Path  # $CODEX_HOME: rollouts in sessions/YYYY/MM/DD/

    def claude_session(self, project: str, session: str) -> Path:
        return self.claude / "projects" / project / f"{session}.jsonl"


def now(minutes_ago: float = 0) -> str:
    """A timestamp as the tools write it; the monitor shows only sessions active lately."""
    when = datetime.now(UTC) - timedelta(minutes=minutes_ago)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
