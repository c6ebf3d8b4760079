"""The Linux desktop entry: `make install-desktop`'s script installs it and the icons
under $XDG_DATA_HOME, registers it for folders, and a launch through GLib (what a
file manager's "Open with Sparrow" does) runs the program with the folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import require, require_program

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "packaging" / "install-desktop.sh"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux desktops")


def install(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    return subprocess.run(
        [str(INSTALL), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def recorder(folder: Path) -> Path:
    """A stand-in program (the launch is what is tested, not the app) that writes its
    arguments, one a line, beside itself."""
    folder.mkdir(parents=True)
    program = folder / "sparrow-desktop"
    program.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$(dirname "$0")/argv.txt"\n')
    program.chmod(0o755)
    return program


def test_install_writes_a_valid_entry_for_folders_and_the_icons(tmp_path: Path) -> None:
    data = tmp_path / "data"
    program = recorder(tmp_path / "app")
    done = install(data, str(program))
    assert done.returncode == 0, done.stderr
    entry = data / "applications" / "sparrow.desktop"
    text = entry.read_text()
    assert f'Exec="{program}" %f' in text.splitlines()
    assert "MimeType=inode/directory;" in text.splitlines()
    for size in SIZES:
        icon = data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "sparrow.png"
        assert icon.read_bytes() == (ROOT / "assets" / "icons" / f"sparrow-{size}.png").read_bytes()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / "sparrow.svg").is_file()

    validate = require_program("desktop-file-validate")
    checked = subprocess.run([validate, str(entry)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout
    require_program("update-desktop-database")
    cache = (data / "applications" / "mimeinfo.cache").read_text()
    assert "inode/directory=sparrow.desktop;" in cache


def test_open_with_passes_the_folder_even_through_an_awkward_path(tmp_path: Path) -> None:
    gio = require_program("gio")
    data = tmp_path / "data"
    program = recorder(tmp_path / 'odd "dir" $HOME `x` \\ end')
    assert install(data, str(program)).returncode == 0
    folder = tmp_path / "a project folder"
    folder.mkdir()
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    entry = data / "applications" / "sparrow.desktop"
    done = subprocess.run(
        [gio, "launch", str(entry), str(folder)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    argv = program.parent / "argv.txt"
    deadline = time.monotonic() + 30  # gio returns once the program is spawned
    while not argv.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    require("a launched program (gio spawned nothing)", argv.exists())
    time.sleep(0.2)
    assert argv.read_text().splitlines() == [str(folder)]


def test_uninstall_removes_what_install_wrote(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert install(data, str(recorder(tmp_path / "app"))).returncode == 0
    done = install(data, "--uninstall")
    assert done.returncode == 0, done.stderr
    assert not (data / "applications" / "sparrow.desktop").exists()
    assert not list((data / "icons").rglob("sparrow.*"))


def test_install_refuses_a_program_that_is_not_there(tmp_path: Path) -> None:
    done = install(tmp_path / "data", str(tmp_path / "nowhere" / "sparrow-desktop"))
    assert done.returncode == 1
    assert "is not an executable program" in done.stderr
    assert not (tmp_path / "data" / "applications" / "sparrow.desktop").exists()


def test_install_refuses_a_path_no_launcher_can_run(tmp_path: Path) -> None:
    done = install(tmp_path / "data", str(recorder(tmp_path / "100% sure")))
    assert done.returncode == 1
    assert "has a % in its path" in done.stderr
    assert not (tmp_path / "data" / "applications" / "sparrow.desktop").exists()
