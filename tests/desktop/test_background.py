"""The tray's menu actions as the window wires them (desktop.background), against
the real embedded server and real scripted runs: open a run, stop one, pause all
(the emergency stop), quit; and closing with no tray closes as before."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.background import Background, WindowHooks
from server.web.serve import EmbeddedServer
from tests.desktop.test_notices import WRITE_SCRIPT, post, wait_for

SLEEPER = {
    "turns": [
        {"tool_calls": [{"tool": "run_shell", "args": {"command": "sleep 120"}}]},
        {"text": "woke up"},
    ]
}


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    embedded = EmbeddedServer()
    embedded.start()
    yield embedded
    embedded.stop()


class Window:
    """Records what the background asks of the window."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def hooks(self) -> WindowHooks:
        return WindowHooks(
            show=lambda: self.calls.append("show"),
            hide=lambda: self.calls.append("hide"),
            navigate=lambda where: self.calls.append(f"navigate {where}"),
            close=lambda: self.calls.append("close"),
        )


def get(server: EmbeddedServer, path: str) -> dict[str, object]:
    request = urllib.request.Request(
        f"{server.base_url}{path}", headers={"Authorization": f"Bearer {server.token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        data = json.loads(answer.read())
    assert isinstance(data, dict)
    return data


def status(server: EmbeddedServer, run_id: str) -> object:
    run = get(server, f"/api/runs/{run_id}")["run"]
    assert isinstance(run, dict)
    return run["status"]


def test_the_menu_actions_open_stop_pause_all_and_quit(
    server: EmbeddedServer, workspace: Path
) -> None:
    window = Window()
    background = Background(window.hooks(), icon=None)
    background.start(server.port, server.token)
    service = background._service
    assert service is not None
    try:
        wait_for(lambda: service.client.connections > 0, "the /ws client")
        body = {
            "workspace": str(workspace),
            "task": "write",
            "model": "script",
            "script": WRITE_SCRIPT,
            "mode": "supervised",
        }
        asking = str(post(server, "/api/runs", body)["run"]["id"])
        wait_for(lambda: service.activity.approvals, "the approval in the tray's model")

        background.on_action(f"open:{asking}")
        wait_for(lambda: len(window.calls) >= 2, "the window to open on the run")
        assert window.calls == ["show", f"navigate #run={asking}"]

        background.on_action(f"stop:{asking}")
        wait_for(lambda: status(server, asking) == "cancelled", "the run to stop")

        sleeping = str(
            post(server, "/api/runs", body | {"script": SLEEPER, "mode": "autonomous"})["run"]["id"]
        )
        wait_for(lambda: service.activity.runs, "the second run in the tray's model")
        assert background.on_closing() is True  # no tray here: closing closes, as before
        background.on_action("pause_all")
        wait_for(lambda: status(server, sleeping) == "cancelled", "the emergency stop")
        assert get(server, "/api/safety")["mode"] == "emergency-stop"

        background.on_action("quit")
        wait_for(lambda: "close" in window.calls, "Quit to close the window")
    finally:
        background.stop()
