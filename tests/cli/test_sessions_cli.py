"""`sparrow sessions`, `sessions search|delete|export`, `sparrow resume` and
`sparrow replay --speed`, run as the installed command."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from server.cli import replay_command
from server.core.paths import resolve_paths
from tests.cli.test_cli import ndjson, sparrow


def _script(tmp_path: Path, name: str, *texts: str, read: str = "") -> str:
    turns: list[dict[str, object]] = [{"text": t} for t in texts]
    if read:
        turns.insert(0, {"text": "Reading.",
                         "tool_calls": [{"tool": "read_file", "args": {"path": read}}]})
    path = tmp_path / name
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def test_list_search_resume_export_replay_and_delete(workspace: Path, tmp_path: Path) -> None:
    (workspace / "log.txt").write_text("the pangolin rolled up\n")
    other = tmp_path / "other"
    other.mkdir()
    first = ndjson(sparrow("run", "Read the log", "-w", str(workspace), "--json",
                           "--script", _script(tmp_path, "1.json", "Done.", read="log.txt")).stdout)
    session = first[0]["session_id"]
    sparrow("run", "Elsewhere", "-w", str(other), "--script", _script(tmp_path, "2.json", "Ok."))

    listed = ndjson(sparrow("sessions", "--json").stdout)
    assert [s["title"] for s in listed] == ["Elsewhere", "Read the log"]
    assert listed[1]["id"] == session and listed[1]["status"] == "completed"
    only = ndjson(sparrow("sessions", "--workspace", str(workspace), "--json").stdout)
    assert [s["id"] for s in only] == [session]
    table = sparrow("sessions").stdout
    assert session in table and "Read the log" in table and "completed" in table

    found = ndjson(sparrow("sessions", "search", "pangolin", "--json").stdout)
    assert [(h["session_id"], h["run_id"], h["kind"]) for h in found] == [
        (session, first[0]["run_id"], "tool_output")
    ]
    assert "[pangolin]" in sparrow("sessions", "search", "pangolin").stdout
    assert "nothing found" in sparrow("sessions", "search", 'odd"AND(').stdout

    resumed = ndjson(sparrow("resume", session, "And now?", "--json",
                             "--script", _script(tmp_path, "3.json", "Still rolled.")).stdout)
    assert resumed[0]["session_id"] == session and resumed[0]["continues"] == first[0]["run_id"]
    missing = sparrow("resume", "s-none", "hi", check=False)
    assert missing.returncode == 2 and "no session 's-none'" in missing.stderr

    out = tmp_path / "export.json"
    sparrow("sessions", "export", session, "--format", "json", "--output", str(out))
    data = json.loads(out.read_text())
    assert [r["run"]["id"] for r in data["runs"]] == [first[0]["run_id"], resumed[0]["run_id"]]
    markdown = sparrow("sessions", "export", session).stdout
    assert markdown.startswith("# Read the log") and "pangolin" in markdown

    at_once = ndjson(sparrow("replay", resumed[0]["run_id"], "--json").stdout)
    paced = ndjson(sparrow("replay", resumed[0]["run_id"], "--json", "--speed", "1000").stdout)
    assert paced == at_once
    assert list(dict.fromkeys(e["run_id"] for e in at_once)) == [first[0]["run_id"],
                                                                 resumed[0]["run_id"]]
    assert sparrow("replay", first[0]["run_id"], "--speed", "-1", check=False).returncode == 2

    gone = sparrow("sessions", "delete", session)
    assert f"deleted session {session}" in gone.stdout
    assert [s["title"] for s in ndjson(sparrow("sessions", "--json").stdout)] == ["Elsewhere"]
    again = sparrow("sessions", "delete", session, check=False)
    assert again.returncode == 1 and "no session" in again.stderr
    assert sparrow("sessions", "export", session, check=False).returncode == 1


def test_replay_pace_scales_the_recorded_gaps(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(replay_command.time, "sleep", slept.append)
    pace = replay_command.Pace(2.0)
    for ts in (10.0, 14.0, 14.5, 14.0, 200.0):  # a clock step back waits nothing
        pace.wait(ts)
    assert slept == [2.0, 0.25, 5.0]  # the day-long pause cut to MAX_PAUSE
    slept.clear()
    at_once = replay_command.Pace(0)
    for ts in (1.0, 50.0):
        at_once.wait(ts)
    assert slept == []


def _age(session: str, days: float) -> None:
    """Make ``session`` look idle for ``days`` (as if last used that long ago)."""
    db = sqlite3.connect(resolve_paths().database)
    with db:
        db.execute("UPDATE sessions SET last_active = ? WHERE id = ?",
                   (time.time() - days * 86_400, session))
    db.close()


def test_continuing_an_old_session_keeps_it_past_the_age_limit(
    workspace: Path, tmp_path: Path, sparrow_home: Path
) -> None:
    """`[sessions] keep_days` deletes idle sessions at the start of a command:
    not the one `sparrow run --continue` or `sparrow resume` continues."""
    first = ndjson(sparrow("run", "Plant tulips", "-w", str(workspace), "--json",
                           "--script", _script(tmp_path, "1.json", "Planted.")).stdout)
    other = ndjson(sparrow("run", "Forgotten", "-w", str(workspace), "--json",
                           "--script", _script(tmp_path, "2.json", "Ok.")).stdout)
    session, stale = first[0]["session_id"], other[0]["session_id"]
    with (sparrow_home / "config" / "config.toml").open("a") as config:
        config.write("\n[sessions]\nkeep_days = 3\n")
    for old in (session, stale):
        _age(old, 10)

    went_on = sparrow("run", "--continue", first[0]["run_id"], "And roses?", "--json",
                      "--script", _script(tmp_path, "3.json", "Roses too."), check=False)
    assert went_on.returncode == 0, went_on.stderr
    follow = ndjson(went_on.stdout)
    assert follow[0]["session_id"] == session and follow[-1]["status"] == "completed"
    listed = {s["id"]: s for s in ndjson(sparrow("sessions", "--json").stdout)}
    assert list(listed) == [session]  # the other old one went, as the limit says
    assert listed[session]["runs"] == 2

    _age(session, 10)
    resumed = sparrow("resume", session, "And then?", "--json",
                      "--script", _script(tmp_path, "4.json", "Water them."), check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert ndjson(resumed.stdout)[0]["session_id"] == session
    runs = [r["id"] for r in ndjson(sparrow("runs", "--json").stdout)]
    assert runs[-2:] == [follow[0]["run_id"], first[0]["run_id"]] and len(runs) == 3
    info = ndjson(sparrow("sessions", "--json").stdout)
    assert [(s["id"], s["runs"]) for s in info] == [(session, 3)]


def test_a_command_that_names_an_old_run_or_session_reads_it_first(
    workspace: Path, tmp_path: Path, sparrow_home: Path
) -> None:
    """Replay, compact and export of a run or session past `keep_days` show it;
    the age limit deletes it at the next command that lists."""
    first = ndjson(sparrow("run", "Plant tulips", "-w", str(workspace), "--json",
                           "--script", _script(tmp_path, "1.json", "Planted.")).stdout)
    run, session = first[0]["run_id"], first[0]["session_id"]
    with (sparrow_home / "config" / "config.toml").open("a") as config:
        config.write("\n[sessions]\nkeep_days = 3\n")
    _age(session, 10)

    replayed = sparrow("replay", run, "--speed", "0", check=False)
    assert replayed.returncode == 0 and "Planted." in replayed.stdout, replayed.stderr
    compacted = sparrow("compact", "--run", run, "--out", str(tmp_path / "handoff.md"), check=False)
    assert compacted.returncode == 0, compacted.stderr
    assert (tmp_path / "handoff.md").read_text().startswith("# Handoff")
    exported = sparrow("sessions", "export", session, check=False)
    assert exported.returncode == 0 and "Plant tulips" in exported.stdout, exported.stderr

    assert ndjson(sparrow("sessions", "--json").stdout) == []  # the list applies the limit
    gone = sparrow("replay", run, check=False)
    assert gone.returncode != 0 and "no run" in gone.stderr
