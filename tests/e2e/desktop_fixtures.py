"""The real ``sparrow-desktop`` window under a private Xvfb, for the window tests:
a launcher that starts the console script (arguments and environment of the
test's choosing) and reads its lines, killed at the end if still running."""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.common import xvfb_display
from tests.conftest import require, require_program

# Guards against a hang, not timing goals (those are in bench/).
READY_TIMEOUT = 90.0
EXIT_TIMEOUT = 30.0


@pytest.fixture(scope="module")
def xvfb() -> Iterator[str]:
    """A private X server; its display name (``-displayfd`` picks a free number)."""
    require("Linux", sys.platform.startswith("linux"))
    with xvfb_display(require_program("Xvfb")) as name:
        assert name, "Xvfb did not start"
        yield name


@dataclass
class Desktop:
    process: subprocess.Popen[str]
    lines: queue.Queue[str]
    stderr: Path
    env: dict[str, str]

    def wait_until(self, check: Callable[[], bool], timeout: float = READY_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                pytest.fail(
                    f"not so after {timeout:g} s; stderr: {self.stderr.read_text()[-4000:]}"
                )
            time.sleep(0.1)

    def wait_for_line(self, wanted: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        seen = []
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            seen.append(line)
            if line == wanted:
                return
        pytest.fail(
            f"no {wanted!r} line (exit code {self.process.poll()}); stdout: {seen}; "
            f"stderr: {self.stderr.read_text()[-4000:]}"
        )

    def wait_exit(self) -> int:
        try:
            return self.process.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            pytest.fail(f"the desktop did not exit; stderr: {self.stderr.read_text()[-4000:]}")


Launcher = Callable[..., Desktop]


@pytest.fixture
def launch_desktop(xvfb: str, tmp_path: Path) -> Iterator[Launcher]:
    """Starts the real ``sparrow-desktop`` console script on the private display."""
    script = Path(sys.executable).with_name("sparrow-desktop")
    require("the sparrow-desktop console script (pip install -e .)", script.exists())
    started: list[tuple[subprocess.Popen[str], threading.Thread]] = []
    # A private runtime folder (the single-instance socket), short enough for a socket path.
    runtime = Path(tempfile.mkdtemp(prefix="xdg-"))

    def launch(
        screenshot: Path | None = None, argv: Sequence[str] = (), **overrides: str
    ) -> Desktop:
        env = {
            **os.environ,
            "DISPLAY": xvfb,
            "SPARROW_HOME": str(tmp_path / "home"),
            "XDG_RUNTIME_DIR": str(runtime),
            **overrides,
        }
        env.pop("WAYLAND_DISPLAY", None)
        env.pop("SPARROW_SCREENSHOT", None)
        if screenshot is not None:
            screenshot.unlink(missing_ok=True)
            env["SPARROW_SCREENSHOT"] = str(screenshot)
        stderr = tmp_path / f"desktop-{len(started)}.stderr"
        with stderr.open("w") as err:
            process = subprocess.Popen(
                [str(script), *argv], stdout=subprocess.PIPE, stderr=err, text=True, env=env
            )
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line.rstrip("\n"))

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        started.append((process, reader))
        return Desktop(process, lines, stderr, env)

    yield launch
    for process, reader in started:
        if process.poll() is None:
            process.kill()
        process.wait()
        reader.join(10)
        assert process.stdout is not None
        process.stdout.close()
    shutil.rmtree(runtime, ignore_errors=True)
