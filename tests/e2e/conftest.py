"""Fixtures for the browser tests: the real server (``sparrow-desktop --headless``
in a subprocess, its state in a temporary ``SPARROW_HOME``) and Debian's
Chromium driven by Playwright. Nothing is mocked."""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Page,
    Playwright,
    ViewportSize,
    sync_playwright,
)

from tests.conftest import require, start_autonomous
from tests.e2e.desktop_fixtures import launch_desktop, xvfb  # noqa: F401  # the window tests

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LAUNCH_URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=[A-Za-z0-9_\-]+")
STARTUP_TIMEOUT_S = 30.0
SHUTDOWN_TIMEOUT_S = 15.0
VIEWPORT: ViewportSize = {"width": 1280, "height": 800}
# The checkout these tests belong to. The venv's editable install may point at
# another one (a git worktree sharing the venv): the server must run this code.
CHECKOUT = Path(__file__).resolve().parents[2]


@dataclass
class SparrowServer:
    launch_url: str
    base_url: str
    home: Path
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)

    def log(self) -> str:
        return "".join(self.output[-200:])


def _server_command() -> list[str]:
    """The venv's console script, the one `pip install -e .[test]` made."""
    bin_dir = Path(sys.executable).parent
    script = shutil.which("sparrow-desktop", path=str(bin_dir)) or shutil.which("sparrow-desktop")
    if script is None:
        pytest.fail(
            f"the console script sparrow-desktop is not installed next to {sys.executable}: "
            "run `pip install -e .[test]` (or `make test`)"
        )
    return [script, "--headless"]


def _read_lines(stream: object, lines: queue.Queue[str | None], sink: list[str]) -> None:
    assert hasattr(stream, "readline")
    for line in iter(stream.readline, ""):
        sink.append(line)
        lines.put(line)
    lines.put(None)


@contextmanager
def launch_server(home: Path, env: Mapping[str, str] | None = None) -> Iterator[SparrowServer]:
    """``sparrow-desktop --headless`` with its state in ``home`` and ``env`` added to
    its environment; stopped with SIGTERM at the end (failing if it ignores it)."""
    pythonpath = os.pathsep.join(p for p in (str(CHECKOUT), os.environ.get("PYTHONPATH")) if p)
    full_env = {
        **os.environ,
        "SPARROW_HOME": str(home),
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": pythonpath,
        **(env or {}),
    }
    process = subprocess.Popen(
        _server_command(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=full_env,
        cwd=home,
    )
    output: list[str] = []
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(process.stdout, lines, output), daemon=True)
    reader.start()

    match: re.Match[str] | None = None
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    try:
        while match is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(
                    f"no launch URL within {STARTUP_TIMEOUT_S:g} s; output:\n{''.join(output)}"
                )
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                process.wait(timeout=SHUTDOWN_TIMEOUT_S)
                pytest.fail(
                    f"sparrow-desktop --headless exited ({process.returncode}) before serving; "
                    f"output:\n{''.join(output)}"
                )
            match = LAUNCH_URL.search(line)
        server = SparrowServer(
            launch_url=match.group(0),
            base_url=f"http://127.0.0.1:{match.group(1)}",
            home=home,
            process=process,
            output=output,
        )
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=SHUTDOWN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                pytest.fail(f"the server ignored SIGTERM for {SHUTDOWN_TIMEOUT_S:g} s")
        reader.join(timeout=5)
        if process.stdout is not None:
            process.stdout.close()


def session_folders_env(claude: Path, codex: Path) -> dict[str, str]:
    """Where the server's session monitor looks (discovery reads these variables)."""
    return {"CLAUDE_CONFIG_DIR": str(claude), "CODEX_HOME": str(codex)}


@contextmanager
def autonomous_server(
    tmp_path_factory: pytest.TempPathFactory, extra_config: str = ""
) -> Iterator[SparrowServer]:
    """A server in a home of its own, autonomous, with ``extra_config`` after that
    in its config.toml. Its session monitor watches empty folders, never the
    user's ~/.claude or ~/.codex."""
    home = tmp_path_factory.mktemp("sparrow-home")
    start_autonomous(home)
    if extra_config:
        with (home / "config" / "config.toml").open("a") as config:
            config.write(extra_config)
    sessions = tmp_path_factory.mktemp("no-sessions")
    env = session_folders_env(sessions / "claude", sessions / "codex")
    with launch_server(home, env) as server:
        yield server


@pytest.fixture(scope="session")
def sparrow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparrowServer]:
    with autonomous_server(tmp_path_factory) as server:
        yield server


@pytest.fixture
def server(sparrow_server: SparrowServer) -> SparrowServer:
    """The server ``open_app`` opens: the shared one, unless a module has its own."""
    return sparrow_server


# Package scope, not session: Playwright's sync driver keeps an event loop
# registered on the main thread, and async tests outside tests/e2e must not see it.
@pytest.fixture(scope="package")
def playwright_driver() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="package")
def browser(playwright_driver: Playwright) -> Iterator[Browser]:
    # Skipped here when missing, a failure in CI. Never `playwright install`.
    require(f"Chromium at {CHROMIUM} (apt-get install chromium)", CHROMIUM.exists())
    browser = playwright_driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    yield browser
    browser.close()


class PageErrors:
    """Uncaught exceptions and console errors of a page (network refusals aside:
    a 400 the UI shows to the user is logged by Chromium as a console error)."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.errors.append(f"console: {message.text}")

    def on_page_error(self, error: Exception) -> None:
        self.errors.append(f"uncaught: {error}")


ColorScheme = Literal["dark", "light"]
OpenApp = Callable[..., Page]


@contextmanager
def page_opener(browser: Browser, server: SparrowServer) -> Iterator[OpenApp]:
    """Open the UI of ``server`` in a fresh browser context through the launch URL
    (the server trades the token for a cookie). At the end: no page reported an
    error, and the server is still alive."""
    opened: list[tuple[Page, PageErrors]] = []

    def open_page(color_scheme: ColorScheme = "dark") -> Page:
        context = browser.new_context(viewport=VIEWPORT, color_scheme=color_scheme)
        page = context.new_page()
        errors = PageErrors()
        page.on("console", errors.on_console)
        page.on("pageerror", errors.on_page_error)
        opened.append((page, errors))
        page.goto(server.launch_url)
        return page

    yield open_page
    reported = []
    for page, errors in opened:
        page.context.close()
        reported += errors.errors
    assert not reported, "the page reported errors:\n" + "\n".join(reported)
    assert server.process.poll() is None, f"the server died:\n{server.log()}"


@pytest.fixture
def open_app(browser: Browser, server: SparrowServer) -> Iterator[OpenApp]:
    """Pages of the module's ``server`` (see ``page_opener``)."""
    with page_opener(browser, server) as open_page:
        yield open_page


@pytest.fixture
def app(open_app: OpenApp) -> Page:
    """The UI in the dark theme, ready to use."""
    return open_app()
