"""Automatic compaction in a long scripted run: the first user message and
the last six messages kept verbatim, a handoff doc written, PreCompact then
PostCompact fired, the run finishes, and the next request is the compacted
conversation (with the meter dropping to it, not stale)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import ndjson, sparrow


def test_a_long_run_compacts_and_finishes(workspace: Path, tmp_path: Path,
                                          sparrow_home: Path) -> None:
    log = tmp_path / "hooks.log"
    config = sparrow_home / "config" / "config.toml"
    config.write_text(
        config.read_text()
        + "\n[context]\ncompact_chars = 4000\n"
        + f'\n[[hooks.PreCompact]]\ncommand = "echo pre >> {log}"\n'
        + f'\n[[hooks.PostCompact]]\ncommand = "echo post >> {log}"\n'
    )
    for n in range(12):
        (workspace / f"part{n}.txt").write_text(f"part {n}: " + "lorem ipsum " * 40)
    turns = [
        {"text": f"Reading part {n}.",
         "tool_calls": [{"tool": "read_file", "args": {"path": f"part{n}.txt"}}]}
        for n in range(12)
    ]
    turns.append({"text": "All twelve parts read."})
    script = tmp_path / "long.json"
    script.write_text(json.dumps({"turns": turns}))

    events = ndjson(sparrow("run", "Read every part, in order.", "-w", str(workspace),
                            "--script", str(script), "--json").stdout)

    compactions = [e for e in events if e["type"] == "compacted"]
    assert compactions, "no compaction happened"
    first = compactions[0]
    kept = first["messages"]
    assert kept[0]["role"] == "user"
    assert kept[0]["text"].startswith("Read every part, in order.")
    assert "summarised by Sparrow" in kept[0]["text"] and first["summarised_by"] == "extract"
    assert first["before_chars"] > first["after_chars"] > 0
    # The last six messages before the compaction, verbatim.
    added = [e["message"] for e in events
             if e["type"] == "message_added" and e["seq"] < first["seq"]]
    assert kept[-6:] == added[-6:]
    assert len(kept) >= 7
    handoff = Path(first["handoff_path"])
    assert handoff.is_file() and handoff.parent == workspace / ".sparrow" / "handoff"
    assert "Read every part, in order." in handoff.read_text()
    assert log.read_text().split() == ["pre", "post"] * len(compactions)
    assert events[-1]["type"] == "run_finished" and events[-1]["status"] == "completed"

    # The request after the compaction carried the compacted conversation.
    run_id = events[0]["run_id"]
    turn = first["turn"]
    sent = json.loads(sparrow("replay", run_id, "--request", str(turn), "--json").stdout)
    assert sent["messages"][: len(kept)] == kept
    # The meter after it: started over from the compacted conversation.
    after = next(e for e in events if e["type"] == "context_updated" and e["seq"] > first["seq"])
    assert after["chars"]["transcript"] == first["after_chars"]
    assert after["measured_tokens"] is None
