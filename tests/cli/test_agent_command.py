"""``sparrow agent`` as a user runs it, on the real files and store under the
test's SPARROW_HOME: listed (with invalid files and their reasons), run now as
``sparrow run`` runs, written from the template, and edited in $EDITOR."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from server.core.paths import Paths
from tests.cli.test_cli import SPARROW, ndjson, sparrow


def write_agent(paths: Paths, name: str, front: str) -> Path:
    paths.agents.mkdir(parents=True, exist_ok=True)
    path = paths.agents / f"{name}.agent.md"
    path.write_text(f"---\n{front}---\nSay hello.\n")
    return path


def test_list_shows_agents_next_runs_and_invalid_files(paths: Paths, workspace: Path) -> None:
    assert "no agents: write one with `sparrow agent new NAME`" in sparrow("agent", "list").stdout
    write_agent(paths, "hourly", f'workspace: {workspace}\nmodel: demo\nschedule: "0 * * * *"\n')
    write_agent(paths, "manual", f"workspace: {workspace}\n")
    write_agent(paths, "broken", f"workspace: {workspace}\nschedule: often\n")
    table = sparrow("agent", "list").stdout.splitlines()
    assert table[0].split() == ["NAME", "SCHEDULE", "NEXT", "RUN", "MODEL", "LAST", "RUN",
                                "WORKSPACE"]
    assert table[1].split()[:2] == ["hourly", "0"] and "never" in table[1]
    assert table[2].split()[:4] == ["manual", "-", "by", "hand"] and "default" in table[2]
    assert table[3].startswith("invalid: broken: 'schedule': 'often' is not a cron expression")

    rows = ndjson(sparrow("agent", "list", "--json").stdout)
    assert [(r["name"], r["valid"]) for r in rows] == [
        ("hourly", True), ("manual", True), ("broken", False)
    ]
    hourly = rows[0]
    assert hourly["schedule"] == "0 * * * *" and hourly["workspace"] == str(workspace)
    assert hourly["next_run"] % 60 == 0 and hourly["last_run"] is None
    assert "is not a cron expression" in rows[2]["reason"]


def test_run_runs_the_agent_now_and_lists_its_last_run(paths: Paths, workspace: Path) -> None:
    write_agent(paths, "greeter", f"workspace: {workspace}\nmodel: demo\n")
    events = ndjson(sparrow("agent", "run", "greeter", "--json").stdout)
    assert events[0]["type"] == "run_started" and events[0]["task"] == "Say hello."
    assert events[-1]["type"] == "run_finished" and events[-1]["status"] == "completed"
    human = sparrow("agent", "run", "greeter")
    assert "replay it: sparrow replay" in human.stderr
    [row] = ndjson(sparrow("agent", "list", "--json").stdout)
    assert row["last_run"]["status"] == "completed" and row["last_run"]["trigger"] == "hand"
    runs = ndjson(sparrow("runs", "--json").stdout)
    assert {r["task"] for r in runs} == {"Say hello."} and len(runs) == 2


def test_run_refuses_an_unknown_or_invalid_agent(paths: Paths, workspace: Path) -> None:
    missing = sparrow("agent", "run", "ghost", check=False)
    assert missing.returncode == 2 and "sparrow: no agent 'ghost'" in missing.stderr
    write_agent(paths, "bad", "model: demo\n")
    bad = sparrow("agent", "run", "bad", check=False)
    assert bad.returncode == 2
    assert "the agent 'bad' is not valid: 'workspace' is missing" in bad.stderr
    name = sparrow("agent", "run", "../x", check=False)
    assert name.returncode == 2 and "is not an agent name" in name.stderr


def test_new_writes_a_valid_template_and_says_its_path_off_a_terminal(
    paths: Paths, workspace: Path
) -> None:
    made = subprocess.run(
        [SPARROW, "agent", "new", "fresh"], capture_output=True, text=True, cwd=workspace,
        timeout=120,
    )
    path = paths.agents / "fresh.agent.md"
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines() == [f"wrote {path}", f"edit it in your editor: {path}"]
    assert f"workspace: {workspace}" in path.read_text()
    [row] = ndjson(sparrow("agent", "list", "--json").stdout)
    assert row["valid"] and row["name"] == "fresh"
    again = sparrow("agent", "new", "fresh", check=False)
    assert again.returncode == 2 and "exists" in again.stderr
    assert sparrow("agent", "edit", "fresh").stdout == f"edit it in your editor: {path}\n"
    gone = sparrow("agent", "edit", "nothing", check=False)
    assert gone.returncode == 2 and "sparrow agent new nothing" in gone.stderr


def test_edit_opens_the_editor_on_a_terminal_and_checks_the_result(
    paths: Paths, workspace: Path, tmp_path: Path
) -> None:
    path = write_agent(paths, "nightly", f"workspace: {workspace}\n")
    # The "editor" adds a schedule; a pseudo-terminal makes the command interactive.
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('---\\nSay', 'schedule: \"@daily\"\\n---\\nSay'))\n"
    )
    script = (
        "import os, pty, sys\n"
        f"sys.exit(os.waitstatus_to_exitcode(pty.spawn([{SPARROW!r}, 'agent', 'edit', "
        "'nightly'])))\n"
    )
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "saved nightly: valid, scheduled @daily" in done.stdout
    assert 'schedule: "@daily"' in path.read_text()


def test_runs_and_sessions_name_the_agent_that_started_them(
    paths: Paths, workspace: Path
) -> None:
    write_agent(paths, "night-gardener", f"workspace: {workspace}\nmodel: demo\n")
    by_agent = ndjson(sparrow("agent", "run", "night-gardener", "--json").stdout)[0]
    by_hand = ndjson(sparrow("run", "--demo", "-w", str(workspace), "--json", "hi").stdout)[0]
    # A follow-up someone typed keeps the session the agent's: it started it.
    sparrow("run", "--demo", "--continue", by_agent["run_id"], "--json", "and then?")

    runs = ndjson(sparrow("runs", "--json").stdout)
    assert [(r["session_id"], r["agent"]) for r in runs] == [
        (by_agent["session_id"], None), (by_hand["session_id"], None),
        (by_agent["session_id"], "night-gardener"),
    ]
    sessions = ndjson(sparrow("sessions", "--json").stdout)
    assert [(s["id"], s["agent"], s["runs"]) for s in sessions] == [
        (by_agent["session_id"], "night-gardener", 2), (by_hand["session_id"], None, 1)
    ]
    table = sparrow("sessions").stdout.splitlines()
    assert table[0].split()[:3] == ["SESSION", "STATUS", "AGENT"]
    assert table[1].split()[:3] == [by_agent["session_id"], "completed", "night-garde…"]
    assert table[2].split()[:3] == [by_hand["session_id"], "completed", "-"]
    listed = sparrow("runs").stdout.splitlines()
    assert listed[0].split()[:3] == ["RUN", "STATUS", "AGENT"]
    assert [line.split()[2] for line in listed[1:]] == ["-", "-", "night-garde…"]
