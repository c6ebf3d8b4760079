"""``sparrow checkpoints``, ``rewind``, ``diff`` and ``checkpoints prune`` as a
user runs them: after a demo run, in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from server.core.paths import Paths
from server.engine.store import Store
from tests.cli.test_cli import ndjson, sparrow

DEMO_FILE = "SPARROW_DEMO.md"


def demo_run(workspace: Path) -> tuple[str, list[dict[str, Any]]]:
    events = ndjson(sparrow("run", "--demo", "--workspace", str(workspace), "--json", "hi").stdout)
    run_id = events[0]["run_id"]
    listed = ndjson(sparrow("checkpoints", "--run", run_id, "--json").stdout)
    return run_id, listed


def test_list_checkpoints_of_a_run_and_of_a_workspace(workspace: Path) -> None:
    run_id, listed = demo_run(workspace)
    assert listed, "the demo run writes a file: it has checkpoints"
    assert all(c["run_id"] == run_id for c in listed)
    assert [c["created_at"] for c in listed] == sorted(
        (c["created_at"] for c in listed), reverse=True
    )
    table = sparrow("checkpoints", "--workspace", str(workspace)).stdout
    assert "CHECKPOINT" in table and listed[0]["id"] in table and "write_file" in table
    assert "no checkpoints" in sparrow("checkpoints", "--run", "r-none").stdout


def test_diff_names_what_changed_since_a_checkpoint(workspace: Path) -> None:
    _, listed = demo_run(workspace)
    before_write = next(c for c in reversed(listed) if c["tool"] == "write_file")
    out = sparrow("diff", before_write["id"]).stdout
    assert DEMO_FILE in out and "+" in out
    (workspace / "blob.bin").write_bytes(b"\0\1\2binary")
    assert "Binary file blob.bin" in sparrow("diff", before_write["id"]).stdout
    missing = sparrow("diff", "c-none", check=False)
    assert missing.returncode == 1 and "no checkpoint 'c-none'" in missing.stderr


def test_rewind_needs_yes_when_not_interactive_then_restores(workspace: Path) -> None:
    _, listed = demo_run(workspace)
    target = next(c for c in reversed(listed) if c["tool"] == "write_file")
    original = (workspace / DEMO_FILE).read_text()
    (workspace / DEMO_FILE).write_text("changed by hand\n")

    refused = sparrow("rewind", "--workspace", str(workspace), check=False)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert (workspace / DEMO_FILE).read_text() == "changed by hand\n"

    done = sparrow("rewind", target["id"], "--workspace", str(workspace), "--yes").stdout
    assert "will change:" in done and "undo with: sparrow rewind" in done
    assert not (workspace / DEMO_FILE).exists()  # the checkpoint was taken before it was written
    assert f"removed  {DEMO_FILE}" in done

    # N=1 is now the checkpoint the rewind took first: rewinding to it undoes the rewind.
    undo = sparrow("rewind", "1", "--workspace", str(workspace), "--yes").stdout
    assert f"restored {DEMO_FILE}" in undo
    assert (workspace / DEMO_FILE).read_text() == "changed by hand\n"
    assert original != "changed by hand\n"

    bad = sparrow("rewind", "99", "--workspace", str(workspace), "--yes", check=False)
    assert bad.returncode == 1 and "no number 99" in bad.stderr


def test_prune_keeps_the_newest(workspace: Path) -> None:
    _, listed = demo_run(workspace)
    assert len(listed) > 1
    out = sparrow("checkpoints", "prune", "--keep", "1").stdout
    assert out.strip() == f"deleted {len(listed) - 1} checkpoint(s)"
    left = ndjson(sparrow("checkpoints", "--workspace", str(workspace), "--json").stdout)
    assert [c["id"] for c in left] == [listed[0]["id"]]
    assert json.loads(json.dumps(left[0]))["workspace"] == str(workspace.resolve())


def test_rewind_is_refused_while_a_run_of_another_process_works_there(
    workspace: Path, paths: Paths
) -> None:
    demo_run(workspace)
    # A live run of this (test) process: as a run of the desktop app would be.
    store = Store(paths.database)
    session = store.create_session(str(workspace.resolve()))
    store.create_run(
        run_id="r-live",
        session_id=session,
        workspace=str(workspace.resolve()),
        task="t",
        model="demo",
        transcript=paths.transcript("r-live"),
    )
    store.close()
    (workspace / DEMO_FILE).write_text("changed by the agent\n")
    refused = sparrow("rewind", "--workspace", str(workspace), "--yes", check=False)
    assert refused.returncode == 1
    assert "run r-live is working on" in refused.stderr
    assert (workspace / DEMO_FILE).read_text() == "changed by the agent\n"
