"""`sparrow worktrees`: what worktree-sandbox runs left behind, and pruning
them without losing a run's work."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2

from tests.cli.test_cli import ndjson, sparrow
from tests.engine.sandbox.test_worktree import make_repo


def _run(workspace: Path, tmp_path: Path, name: str, turns: list[dict[str, object]]) -> str:
    script = tmp_path / f"{name}.json"
    script.write_text(json.dumps({"turns": [*turns, {"text": "Done."}]}))
    events = ndjson(sparrow("run", name, "-w", str(workspace), "--sandbox", "worktree",
                            "--script", str(script), "--json").stdout)
    started = events[0]
    assert "sparrow worktrees prune --run" in json.dumps(events)  # the run says how to drop it
    return str(started["run_id"])


def test_list_then_prune_keeps_the_work_until_forced(workspace: Path, tmp_path: Path) -> None:
    repo = make_repo(workspace)
    idle = _run(workspace, tmp_path, "look", [])
    busy = _run(workspace, tmp_path, "edit", [
        {"tool_calls": [{"tool": "write_file", "args": {"path": "new.txt", "content": "work\n"}}]},
    ])
    listed = {w["run_id"]: w for w in ndjson(sparrow("worktrees", "--json").stdout)}
    assert set(listed) == {idle, busy}
    assert listed[busy]["uncommitted"] == 1 and listed[idle]["uncommitted"] == 0
    assert listed[busy]["branch"] == f"sparrow/{busy}"
    assert listed[busy]["repository"] == str(workspace.resolve())
    assert listed[busy]["run_status"] == "completed"
    text = sparrow("worktrees").stdout
    assert f"git -C {workspace.resolve()} merge sparrow/{busy}" in text

    pruned = sparrow("worktrees", "prune").stdout
    assert f"{idle}: removed" in pruned and f"branch sparrow/{idle} deleted" in pruned
    assert f"{busy}: kept: 1 uncommitted change(s)" in pruned
    assert Path(listed[busy]["path"], "new.txt").read_text() == "work\n"
    assert [w["run_id"] for w in ndjson(sparrow("worktrees", "--json").stdout)] == [busy]

    refused = sparrow("worktrees", "prune", "--run", busy, check=False)
    assert refused.returncode == 1 and Path(listed[busy]["path"]).exists()
    sparrow("worktrees", "prune", "--run", busy, "--force")
    assert sparrow("worktrees", "--json").stdout == ""
    repo = pygit2.Repository(str(workspace))
    assert repo.list_worktrees() == []
    assert [b for b in repo.branches.local if b.startswith("sparrow/")] == []
    assert (workspace / "tracked.txt").read_text() == "original\n"
