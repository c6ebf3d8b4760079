"""Quit at a safe point, against the real embedded server and a real scripted
run: a run in the middle of a shell command when Quit is pressed ends with its
checkpoint made and its transcript closed by ``run_finished``, and what Quit
waits for is said (the tray's tooltip and a notice)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.alerts import Notice
from desktop.app_client import AppClient
from desktop.quitting import SafeQuit
from server.engine.transcript import BadLine, read_transcript
from server.web.serve import EmbeddedServer
from tests.desktop.test_notices import events_of, post, wait_for

SCRIPT = {
    "turns": [
        {
            "tool_calls": [
                {"tool": "write_file", "args": {"path": "notes.md", "content": "draft\n"}},
                {"tool": "run_shell", "args": {"command": "echo started; sleep 120"}},
            ]
        },
        {"text": "never reached: Quit comes first"},
    ]
}


@pytest.fixture
def server() -> Iterator[EmbeddedServer]:
    embedded = EmbeddedServer()
    embedded.start()
    yield embedded
    embedded.stop()


def test_quit_waits_for_a_run_mid_tool_to_end_checkpointed_and_flushed(
    server: EmbeddedServer, workspace: Path
) -> None:
    body = {
        "workspace": str(workspace),
        "task": "draft the notes",
        "model": "script",
        "script": SCRIPT,
    }
    run = post(server, "/api/runs", body)["run"]
    run_id = run["id"]
    assert run["live"] is True

    def shell_going() -> bool:
        return any(
            e["type"] == "tool_requested" and e.get("tool") == "run_shell"
            for e in events_of(server, run_id)
        )

    wait_for(shell_going, "the shell command to start")
    said: list[str] = []
    posted: list[Notice] = []
    app = AppClient(server.port, server.token)
    result = SafeQuit(app, say=said.append, post=posted.append, bound=60.0).run()

    assert result.stopped == (run_id,) and result.cut == ()
    assert said == ["quitting: waiting for 1 run to stop (“draft the notes”)"]
    assert [n.title for n in posted] == ["Sparrow is quitting"]
    assert "“draft the notes” to stop at a safe point (at most 60 s)" in posted[0].body

    info = app.run(run_id)
    assert (info["status"], info["live"]) == ("cancelled", False)
    events: list[Any] = [
        e for e in read_transcript(Path(info["transcript"])) if not isinstance(e, BadLine)
    ]
    kinds = [e.type for e in events]
    assert "checkpoint_created" in kinds  # made before the first change, kept
    assert kinds[-1] == "run_finished"  # the transcript ends with the run's end
    assert (workspace / "notes.md").read_text() == "draft\n"


def test_quit_with_no_runs_says_nothing(server: EmbeddedServer) -> None:
    said: list[str] = []
    result = SafeQuit(
        AppClient(server.port, server.token), say=said.append, post=said.append, bound=60.0
    ).run()
    assert (result.stopped, result.cut, said) == ((), (), [])


def test_the_run_list_says_which_runs_this_server_drives(
    server: EmbeddedServer, workspace: Path
) -> None:
    body = {
        "workspace": str(workspace),
        "task": "t",
        "model": "script",
        "script": {"turns": [{"text": "done"}]},
    }
    run_id = post(server, "/api/runs", body)["run"]["id"]
    app = AppClient(server.port, server.token)
    wait_for(lambda: app.run(run_id)["status"] == "completed", "the run to finish")
    assert app.run(run_id)["live"] is False
    assert app.live_runs() == []
    request = urllib.request.Request(
        f"{server.base_url}/api/runs", headers={"Authorization": f"Bearer {server.token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        listed = json.loads(answer.read())["runs"]
    assert [r["live"] for r in listed if r["id"] == run_id] == [False]
