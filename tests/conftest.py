"""Fixtures every test shares: user state in a temporary SPARROW_HOME, never the
user's own; one async backend; and the CI rule that a missing part fails."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.core.paths import Paths, resolve_paths
from tests.real_model import RealModel, built, running

IN_CI = bool(os.environ.get("CI"))
ROOT = Path(__file__).resolve().parents[1]
# Most tests run the demo or a script end to end, with nobody to answer an
# approval: their state starts Autonomous. Tests of asking set the mode themselves.
AUTONOMOUS_CONFIG = '[autonomy]\nmode = "autonomous"\nlevel = 0.85\n'


def start_autonomous(home: Path) -> None:
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.toml").write_text(AUTONOMOUS_CONFIG)


def require(what: str, available: bool) -> None:
    """Skip when a real component is missing here; fail loudly in CI."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"{what} is required in CI but missing", pytrace=False)
    pytest.skip(f"{what} is not installed")


def require_program(name: str) -> str:
    path = shutil.which(name)
    require(f"the program {name!r}", path is not None)
    assert path is not None
    return path


@pytest.fixture(autouse=True)
def sparrow_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "sparrow-home"
    start_autonomous(home)
    monkeypatch.setenv("SPARROW_HOME", str(home))
    # The installed `sparrow` script imports the checkout its venv was installed
    # from; a test in another worktree must run this checkout's code.
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    )
    # Nor the user's Claude Code and Codex sessions: the monitor watches these.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    # Nor the user's model keys and endpoints: a test that needs one sets its own.
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_BASE_URL")) or name == "OLLAMA_HOST":
            monkeypatch.delenv(name)
    return home


@pytest.fixture
def paths(sparrow_home: Path) -> Paths:
    return resolve_paths().ensure()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def artifacts() -> Path:
    """Where tests leave screenshots for people to look at (kept by CI)."""
    folder = Path(__file__).resolve().parents[1] / "artifacts"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def real_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealModel]:
    """llama.cpp's server with a small real model, once per session (tests/real_model.py)."""
    folder = built()
    require("llama-server and its model (scripts/llama-server.sh builds them)", folder is not None)
    assert folder is not None
    with running(folder, tmp_path_factory.mktemp("llama") / "server.log") as model:
        yield model
