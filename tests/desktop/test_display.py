"""Without a display, ``sparrow-desktop`` says so in one line naming --headless,
before Qt can abort the process with its own message."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from desktop.display import missing_display
from tests.desktop.test_main import desktop_command


def run_without_display(**env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    full.pop("QT_QPA_PLATFORM", None)
    return subprocess.run(
        desktop_command(), capture_output=True, text=True, env={**full, **env}, timeout=120
    )


def assert_one_line_naming_headless(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "no display" in lines[0] and "--headless" in lines[0]
    for qt_text in ("qt.qpa", "platform plugin", "xcb", "Aborted", "Traceback"):
        assert qt_text not in result.stderr


def test_no_display_at_all_is_one_line_naming_headless() -> None:
    result = run_without_display()
    assert_one_line_naming_headless(result)
    assert "neither DISPLAY nor WAYLAND_DISPLAY is set" in result.stderr


def test_a_display_nobody_serves_is_one_line_too(tmp_path: Path) -> None:
    free = next(n for n in range(900, 1000) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    result = run_without_display(DISPLAY=f":{free}", XDG_RUNTIME_DIR=str(tmp_path))
    assert_one_line_naming_headless(result)
    assert f"DISPLAY=:{free}" in result.stderr
    result = run_without_display(WAYLAND_DISPLAY="wayland-9", XDG_RUNTIME_DIR=str(tmp_path))
    assert_one_line_naming_headless(result)


def test_what_counts_as_a_display(tmp_path: Path) -> None:
    assert missing_display({}, "darwin") is None
    assert missing_display({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert missing_display({}, "linux") == "neither DISPLAY nor WAYLAND_DISPLAY is set"
    assert missing_display({"DISPLAY": "not a display"}, "linux") is not None
    # A Wayland compositor is a unix socket in XDG_RUNTIME_DIR: one that listens will do.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(tmp_path / "wayland-0"))
        server.listen()
        env = {"WAYLAND_DISPLAY": "wayland-0", "XDG_RUNTIME_DIR": str(tmp_path)}
        assert (
            missing_display(env, sys.platform if sys.platform.startswith("linux") else "linux")
            is None
        )


def test_headless_needs_no_display() -> None:
    process = subprocess.Popen(
        [*desktop_command(), "--headless"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("Sparrow is serving at http://127.0.0.1:") and "?token=" in line
    finally:
        process.terminate()
        process.communicate(timeout=30)
