"""The home folder as the workspace, end to end through the CLI: a run in a
workspace that holds Sparrow's own folders (here SPARROW_HOME), then a
rewind. Sparrow's database and transcripts are absent from every checkpoint
and unchanged by the rewind."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from tests.cli.test_cli import ndjson, sparrow


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_run_and_a_rewind_in_a_workspace_holding_sparrow_s_state(
    tmp_path: Path, sparrow_home: Path
) -> None:
    home = tmp_path  # the workspace: it holds SPARROW_HOME (tmp_path/sparrow-home)
    assert sparrow_home.parent == home
    (home / "notes.txt").write_text("before\n")
    script = home.parent / f"{home.name}-script.json"
    script.write_text(json.dumps({"turns": [
        {"tool_calls": [{"tool": "write_file", "args": {"path": "notes.txt", "content": "run\n"}}]},
        {"tool_calls": [{"tool": "run_shell", "args": {"command": "echo made > made.txt"}}]},
        {"text": "Done."},
    ]}))
    sparrow("run", "edit my notes", "-w", str(home), "--script", str(script))
    assert (home / "notes.txt").read_text() == "run\n" and (home / "made.txt").exists()

    listed = ndjson(sparrow("checkpoints", "-w", str(home), "--json").stdout)
    assert len(listed) >= 2
    for checkpoint in listed:
        assert not [f for f in checkpoint["files_changed"] if f.startswith("sparrow-home")]
        skipped = {s["path"]: s["reason"] for s in checkpoint["skipped"]}
        for kind in ("config", "state", "data", "cache"):
            assert skipped[f"sparrow-home/{kind}/"] == f"Sparrow's own {kind} folder"

    state = sparrow_home / "state"
    transcripts = _digest(state / "transcripts")
    with sqlite3.connect(state / "sessions.db") as db:
        runs = db.execute("select id, status from runs order by id").fetchall()
    oldest = str(len(listed))
    sparrow("rewind", oldest, "-w", str(home), "--yes")

    assert (home / "notes.txt").read_text() == "before\n" and not (home / "made.txt").exists()
    assert _digest(state / "transcripts") == transcripts
    with sqlite3.connect(state / "sessions.db") as db:
        assert db.execute("select id, status from runs order by id").fetchall() == runs
        assert db.execute("pragma integrity_check").fetchone() == ("ok",)
