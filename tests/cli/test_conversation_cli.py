"""A conversation from a terminal: `sparrow run --continue`, and its replay."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import ndjson, sparrow


def _script(tmp_path: Path, name: str, *texts: str) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"turns": [{"text": t} for t in texts]}))
    return str(path)


def test_a_conversation_continued_twice_and_replayed(workspace: Path, tmp_path: Path) -> None:
    first = ndjson(
        sparrow(
            "run", "Hello?", "-w", str(workspace), "--json",
            "--script", _script(tmp_path, "1.json", "Hi there."),
        ).stdout
    )
    run1 = first[0]["run_id"]
    second = ndjson(
        sparrow(
            "run", "Who are you?", "--continue", run1, "--json",
            "--script", _script(tmp_path, "2.json", "A coding agent."),
        ).stdout
    )
    run2 = second[0]["run_id"]
    assert second[0]["continues"] == run1 and second[0]["session_id"] == first[0]["session_id"]
    third = sparrow(
        "run", "Thanks", "--continue", run1,
        "--script", _script(tmp_path, "3.json", "You're welcome."),
    )
    assert f"follow-up of {run2}" in third.stdout and "You're welcome." in third.stdout

    # The last run's request carried the whole history.
    run3 = json.loads(sparrow("runs", "--json", "--limit", "1").stdout)["id"]
    sent = json.loads(sparrow("replay", run3, "--request", "1", "--json").stdout)
    assert [(m["role"], m["text"]) for m in sent["messages"]] == [
        ("user", "Hello?"),
        ("assistant", "Hi there."),
        ("user", "Who are you?"),
        ("assistant", "A coding agent."),
        ("user", "Thanks"),
    ]
    # Replay shows every turn of the conversation, in order; --run-only the one run.
    replayed = sparrow("replay", run3).stdout
    order = [replayed.index(t) for t in ("Hi there.", "A coding agent.", "You're welcome.")]
    assert order == sorted(order)
    assert "Hi there." not in sparrow("replay", run3, "--run-only").stdout
