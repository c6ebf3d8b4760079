"""The PyInstaller bundle, built from this checkout (or taken from the cache built
from the same sources, tests/bundle/cache.py): its window loads the page under
Xvfb, its server answers with its token, a lazily imported model library works
inside it, and it holds only licences that allow any licence of ours."""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.common import xvfb_display
from tests.bundle.cache import cached_bundle, contents, executable
from tests.bundle.tools import load_packaging_module
from tests.conftest import AUTONOMOUS_CONFIG, require, require_program
from tests.e2e.desktop_fixtures import Desktop
from tests.e2e.test_window import assert_shows_a_page, server_port
from tests.fakes.script import Reply
from tests.fakes.vendors import FakeVendor

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

READY = "Sparrow window ready"
SERVING = re.compile(r"Sparrow is serving at (http://127\.0\.0\.1:\d+)/\?token=([\w-]+)")
# Guards against a hang, not timing goals (bench/bench_package.py has those).
READY_TIMEOUT = 120.0
RUN_TIMEOUT = 120.0


@pytest.fixture(scope="module")
def bundle() -> Path:
    require("Linux (the bundle built here is the Linux one)", sys.platform.startswith("linux"))
    require(
        "PyInstaller (pip install -e '.[package]')", bool(importlib.util.find_spec("PyInstaller"))
    )
    path, seconds = cached_bundle()
    if seconds is not None:
        print(f"\nbuilt the bundle in {seconds:.0f} s: {path}")
    return path


@pytest.fixture(scope="module")
def xvfb() -> Iterator[str]:
    with xvfb_display(require_program("Xvfb")) as name:
        assert name, "Xvfb did not start"
        yield name


def bundle_env(home: Path, **overrides: str) -> dict[str, str]:
    """The environment a user's launch has: nothing that points at this checkout."""
    env = {**os.environ, "SPARROW_HOME": str(home), **overrides}
    for name in ("PYTHONPATH", "PYTHONHOME", "SPARROW_UI_DIR", "WAYLAND_DISPLAY"):
        env.pop(name, None)
    return env


def launch(bundle: Path, env: dict[str, str], *args: str, cwd: Path) -> Desktop:
    stderr = cwd / "bundle.stderr"
    with stderr.open("w") as err:
        process = subprocess.Popen(
            [str(executable(bundle)), *args],
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=cwd,  # not the checkout: nothing of ours is importable from here
        )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return Desktop(process, lines, stderr, env)


def stop(desktop: Desktop) -> int:
    if desktop.process.poll() is None:
        desktop.process.send_signal(signal.SIGTERM)
    code = desktop.wait_exit()
    if desktop.process.stdout is not None:
        desktop.process.stdout.close()
    return code


def serving(desktop: Desktop) -> tuple[str, str]:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        try:
            line = desktop.lines.get(timeout=1.0)
        except queue.Empty:
            if desktop.process.poll() is not None:
                break
            continue
        if found := SERVING.search(line):
            return found.group(1), found.group(2)
    pytest.fail(f"no serving line; stderr: {desktop.stderr.read_text()[-4000:]}")


def request(url: str, token: str | None, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data=data, headers=headers), timeout=30
        ) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def test_the_bundled_window_loads_its_page_under_xvfb(
    bundle: Path, xvfb: str, tmp_path: Path, artifacts: Path
) -> None:
    screenshot = artifacts / "bundle-window.png"
    screenshot.unlink(missing_ok=True)
    env = bundle_env(tmp_path / "home", DISPLAY=xvfb, SPARROW_SCREENSHOT=str(screenshot))
    desktop = launch(bundle, env, cwd=tmp_path)
    try:
        # The page sends this through the JS bridge once it has rendered: the bundled
        # server served it and the bundled QtWebEngine drew it.
        desktop.wait_for_line(READY, READY_TIMEOUT)
        assert server_port(desktop.process.pid) > 0
        assert_shows_a_page(screenshot)
    finally:
        code = stop(desktop)
    assert code == 0, desktop.stderr.read_text()[-4000:]


def test_the_bundled_server_serves_its_page_with_its_token(bundle: Path, tmp_path: Path) -> None:
    desktop = launch(bundle, bundle_env(tmp_path / "home"), "--headless", cwd=tmp_path)
    try:
        base, token = serving(desktop)
        status, page = request(f"{base}/", token)
        assert status == 200
        index = (Path(__file__).resolve().parents[2] / "ui" / "index.html").read_bytes()
        assert page == index
        refused, _ = request(f"{base}/api/runs", None)
        assert refused == 401
    finally:
        assert stop(desktop) == 0, desktop.stderr.read_text()[-4000:]


def test_a_lazily_imported_model_library_works_inside_the_bundle(
    bundle: Path, tmp_path: Path
) -> None:
    """pydantic-ai and the OpenAI SDK load on the first model call, not at start-up:
    a real run against a local OpenAI-compatible server proves the bundle has them."""
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeVendor() as vendor:
        vendor.script(Reply(text="Hello from inside the bundle."))
        (home / "config" / "config.toml").write_text(
            AUTONOMOUS_CONFIG
            + f'[providers.fake]\nbase_url = "{vendor.base_url}/v1"\nkind = "openai-chat"\n'
        )
        env = bundle_env(
            home, CLAUDE_CONFIG_DIR=str(tmp_path / "c"), CODEX_HOME=str(tmp_path / "x")
        )
        desktop = launch(bundle, env, "--headless", cwd=tmp_path)
        try:
            base, token = serving(desktop)
            status, body = request(
                f"{base}/api/runs",
                token,
                {"workspace": str(workspace), "task": "say hello", "model": "fake:fake-model"},
            )
            assert status == 201, body
            run_id = json.loads(body)["run"]["id"]
            deadline = time.monotonic() + RUN_TIMEOUT
            run: dict[str, Any] = {}
            while time.monotonic() < deadline:
                run = json.loads(request(f"{base}/api/runs/{run_id}", token)[1])["run"]
                if run["status"] != "running":
                    break
                time.sleep(0.2)
            _, events = request(f"{base}/api/runs/{run_id}/events", token)
        finally:
            assert stop(desktop) == 0, desktop.stderr.read_text()[-4000:]
    assert run.get("status") == "completed", (run, desktop.stderr.read_text()[-4000:])
    assert vendor.last().path == "/v1/chat/completions"
    added = [e["message"] for e in json.loads(events)["events"] if e["type"] == "message_added"]
    assert "Hello from inside the bundle." in json.dumps(added[-1]), added


def test_the_bundle_holds_only_licences_that_allow_ours(bundle: Path) -> None:
    licences = load_packaging_module("licences")
    inside = contents(bundle)
    verdicts = licences.judge_bundle(inside)
    names = {v.name.lower().replace("-", "_") for v in verdicts}
    # The lazily imported model libraries are in, each with its metadata.
    assert {"pydantic_ai_slim", "openai", "anthropic", "pyside6_essentials"} <= names, names
    assert [v for v in verdicts if not v.allowed] == []
    assert licences.forbidden_bindings(inside) == []
    assert licences.main([str(inside)]) == 0

    notices = (inside / "THIRD-PARTY-NOTICES").read_text()
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in notices
    for name in ("PySide6_Essentials", "pydantic-ai-slim", "uvicorn", "pygit2"):
        assert re.search(rf"^{re.escape(name)} \S+$", notices, re.MULTILINE), name
    # The libraries copied from the build machine, with their packages' copyright files.
    if shutil.which("dpkg-query"):
        assert re.search(r"^libnss3 \(Debian package\): .*libnss3\.so", notices, re.MULTILINE)


def test_the_bundle_leaves_out_what_the_window_does_not_use(bundle: Path) -> None:
    inside = contents(bundle)
    names = {p.name for p in inside.rglob("*")}
    # Our tests, other Qt bindings, GTK (the Qt theme plugin would bring it), QML.
    assert not {"tests", "PyQt5", "PyQt6", "libgtk-3.so.0", "libqgtk3.so"} & names
    assert not (inside / "PySide6" / "Qt" / "qml").exists()
    platforms = {p.name for p in (inside / "PySide6" / "Qt" / "plugins" / "platforms").iterdir()}
    assert {"libqxcb.so", "libqoffscreen.so"} <= platforms
    assert (inside / "PySide6" / "Qt" / "libexec" / "QtWebEngineProcess").is_file()
    assert (inside / "PySide6" / "Qt" / "translations" / "qtwebengine_locales").is_dir()
    assert (inside / "ui" / "index.html").is_file()
