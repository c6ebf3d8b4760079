"""Quit's cut path, with the real ``sparrow-desktop`` under Xvfb: after
``tray.quit_wait_seconds`` Quit quits anyway and names the runs it cut.

A cancel stops a tool at once (its process group is killed), but never cuts a
checkpoint short. So the run here is mid-way through its checkpoint: this test
holds the workspace's checkpoint lock, as another Sparrow process checkpointing
the same folder would, and the run's checkpoint waits for it (the test sees the
waiter in /proc/locks). Quit then waits its bound, cuts the run, says so in a
notice (kept in the state folder: this session bus has no notification daemon)
and the process exits though the checkpoint's thread never ends. The next
start shows the run as interrupted.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from server.engine.checkpoints.shadow import locate
from tests.conftest import require
from tests.e2e.conftest import launch_server
from tests.e2e.desktop_fixtures import READY_TIMEOUT, Desktop
from tests.e2e.test_tray_window import Page, free_port, wait_for
from tests.e2e.test_window import READY

pytestmark = pytest.mark.e2e

CONFIG = '[autonomy]\nmode = "autonomous"\nlevel = 0.85\n[tray]\nquit_wait_seconds = 1\n'
SCRIPT = {
    "turns": [
        {"tool_calls": [{"tool": "write_file", "args": {"path": "notes.md", "content": "x\n"}}]},
        {"text": "never reached: Quit comes first"},
    ]
}


def lock_waiters(lock: Path) -> list[str]:
    """The /proc/locks lines of processes blocked on the flock of ``lock``."""
    inode = os.stat(lock).st_ino
    lines = Path("/proc/locks").read_text().splitlines()
    return [line for line in lines if "->" in line and line.split()[-3].endswith(f":{inode}")]


def test_quit_cuts_a_run_stuck_in_its_checkpoint_says_so_and_exits(
    launch_desktop: Callable[..., Desktop], xvfb: str, tmp_path: Path, workspace: Path
) -> None:
    require("Linux (/proc/locks)", sys.platform.startswith("linux"))
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text(CONFIG)
    lock = locate(home / "state" / "checkpoints", workspace.resolve()).lock_path
    lock.parent.mkdir(parents=True, exist_ok=True)
    held = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process checkpoints this folder
        devtools = free_port()
        desktop = launch_desktop(
            SPARROW_HOME=str(home), QTWEBENGINE_REMOTE_DEBUGGING=f"127.0.0.1:{devtools}"
        )
        desktop.wait_for_line(READY, READY_TIMEOUT)
        page = Page(devtools)
        body = json.dumps(
            {
                "workspace": str(workspace),
                "task": "stuck in its checkpoint",
                "model": "script",
                "script": SCRIPT,
            }
        )
        run_id = page.eval(
            f"fetch('/api/runs', {{method: 'POST', headers: {{'Content-Type': "
            f"'application/json'}}, body: {json.dumps(body)}}}).then(r => r.json())"
            ".then(d => d.run.id)"
        )
        assert isinstance(run_id, str)
        wait_for(lambda: lock_waiters(lock), "the run's checkpoint to wait for the lock")

        page.eval("window.pywebview.api.quit()")  # what Ctrl+Q and the menus' Quit do
        # Exits though the checkpoint's thread is still blocked (the lock is held).
        code = desktop.wait_exit()
        stderr = desktop.stderr.read_text()
        assert f"quit before a safe point: {run_id}" in stderr, stderr[-4000:]
        # Said in the terminal too, and no second wait for the server it holds.
        said = f"Sparrow quit before a safe point: it cut {run_id}; the next start shows it as"
        assert code == 1 and said in stderr and "did not stop" not in stderr, stderr[-4000:]
        kept = json.loads((home / "state" / "desktop-notices.json").read_text())["pending"]
        cut = [n for n in kept if n["key"] == "quit-cut"]
        assert [n["title"] for n in cut] == ["Sparrow quit before a safe point"]
        assert (
            cut[0]["body"] == "Quit after 1 s: cut “stuck in its checkpoint” before a safe point."
        )
    finally:
        os.close(held)

    with launch_server(home) as server:  # the next start
        token = server.launch_url.split("token=", 1)[1]
        request = urllib.request.Request(
            f"{server.base_url}/api/runs/{run_id}", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            run = json.loads(answer.read())["run"]
    assert (run["status"], run["live"]) == ("interrupted", False)
    assert not (workspace / "notes.md").exists()  # cut before its change
