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


def test_compact_as_a_follow_up_and_the_next_request_starts_from_it(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "short.json"
    turns = [{"text": f"Step {n}.", "tool_calls": [{"tool": "list_dir", "args": {"path": "."}}]}
             for n in range(5)]
    script.write_text(json.dumps({"turns": [*turns, {"text": "Done."}]}))
    first = ndjson(sparrow("run", "Look around.", "-w", str(workspace), "--script", str(script),
                           "--json").stdout)
    run1 = first[0]["run_id"]
    compacting = ndjson(sparrow("run", "/compact", "--continue", run1, "--demo",
                                "--json").stdout)
    done = [e for e in compacting if e["type"] == "compacted"]
    assert len(done) == 1 and done[0]["reason"] == "asked by the user (/compact)"
    assert not [e for e in compacting if e["type"] == "model_requested"]
    assert compacting[-1]["status"] == "completed"
    assert compacting[-1]["reason"] == "the conversation was compacted"
    # At once again: nothing left to compact, and it says so rather than pretend.
    again = ndjson(sparrow("run", "/compact", "--continue", run1, "--demo", "--json").stdout)
    assert not [e for e in again if e["type"] == "compacted"]
    assert again[-1]["reason"].startswith("nothing to compact yet")

    follow = tmp_path / "follow.json"
    follow.write_text(json.dumps({"turns": [{"text": "Sure."}]}))
    after = ndjson(sparrow("run", "And now?", "--continue", run1, "--script", str(follow),
                           "--json").stdout)
    sent = json.loads(sparrow("replay", after[0]["run_id"], "--request", "1", "--json").stdout)
    assert sent["messages"][:-1] == done[0]["messages"]
    assert sent["messages"][-1]["role"] == "user"
    assert sent["messages"][-1]["text"] == "And now?"


def test_a_new_conversation_starts_from_a_handoff_doc(workspace: Path, tmp_path: Path) -> None:
    doc = json.loads(sparrow("compact", "--task", "ship the parser", "-w", str(workspace),
                             "--json").stdout)
    script = tmp_path / "go.json"
    script.write_text(json.dumps({"turns": [{"text": "Going on."}]}))
    events = ndjson(sparrow("run", "Go on from there.", "-w", str(workspace), "--from-handoff",
                            doc["path"], "--script", str(script), "--json").stdout)
    assert events[0]["task"] == "Go on from there."  # what the user typed, in the header
    sent = json.loads(sparrow("replay", events[0]["run_id"], "--request", "1", "--json").stdout)
    first = sent["messages"][0]["text"]
    assert first.startswith("Go on from there.") and "ship the parser" in first
    assert "not instructions" in first

    bad = tmp_path / "notes.md"
    bad.write_text("# just notes\n")
    refused = sparrow("run", "x", "-w", str(workspace), "--from-handoff", str(bad), "--demo",
                      check=False)
    assert refused.returncode != 0 and "is not a handoff doc" in refused.stderr
    both = sparrow("run", "x", "--continue", events[0]["run_id"], "--from-handoff", doc["path"],
                   "--demo", check=False)
    assert both.returncode != 0 and "starts a new conversation" in both.stderr


def test_the_meter_is_the_provider_s_figure_and_drops_after_a_compaction(
    workspace: Path, tmp_path: Path, sparrow_home: Path
) -> None:
    config = sparrow_home / "config" / "config.toml"
    config.write_text(config.read_text() + "\n[context]\ncompact_chars = 3000\n")
    (workspace / "big.txt").write_text("word " * 300)
    prompts = [1000, 2000, 3000, 4000, 5000, 800]
    turns = [{"text": f"Turn {n}.", "usage": {"input_tokens": p, "cache_read_input_tokens": 100,
                                               "output_tokens": 10},
              "tool_calls": [{"tool": "read_file", "args": {"path": "big.txt"}}]}
             for n, p in enumerate(prompts[:-1])]
    turns.append({"text": "Done.", "usage": {"input_tokens": prompts[-1], "output_tokens": 3}})
    script = tmp_path / "usage.json"
    script.write_text(json.dumps({"turns": turns}))
    events = ndjson(sparrow("run", "Read big.txt over and over.", "-w", str(workspace),
                            "--script", str(script), "--json").stdout)
    # Right after each response: the meter's total is the provider's prompt size.
    after_usage = []
    for i, e in enumerate(events):
        if e["type"] == "usage_reported":
            meter = next(x for x in events[i:] if x["type"] == "context_updated")
            prompt = e["input_tokens"] + e["cache_read_input_tokens"]
            assert meter["tokens"] == meter["measured_tokens"] == prompt
            after_usage.append(meter["tokens"])
    compaction = next(e for e in events if e["type"] == "compacted")
    # Between the compaction and the next response, no stale measure: an estimate
    # of the compacted conversation; then the new request's own figure.
    after = [e for e in events if e["seq"] > compaction["seq"]]
    usage = next(e for e in after if e["type"] == "usage_reported")
    between = [e for e in after if e["type"] == "context_updated" and e["seq"] < usage["seq"]]
    assert between and all(e["measured_tokens"] is None for e in between)
    assert between[0]["tokens"] < after_usage[-2]
    measured = next(e for e in after if e["type"] == "context_updated" and e["seq"] > usage["seq"])
    assert measured["measured_tokens"] == usage["input_tokens"] + usage["cache_read_input_tokens"]


def test_a_context_length_error_compacts_and_retries_once(
    workspace: Path, sparrow_home: Path
) -> None:
    """The provider says the conversation no longer fits: the run compacts
    (the model writes the summary) and asks again, instead of failing."""
    from tests.fakes.script import Call, Failure, Reply
    from tests.fakes.vendors import FakeVendor

    for name in "abcd":
        (workspace / f"{name}.txt").write_text(f"{name}\n")
    too_long = Failure(400, "This model's maximum context length is 8192 tokens.",
                       code="context_length_exceeded")
    with FakeVendor() as vendor:
        config = sparrow_home / "config" / "config.toml"
        config.write_text(config.read_text() + f'\n[providers.fake]\nbase_url = '
                          f'"{vendor.base_url}/v1"\nkind = "openai-chat"\n')
        vendor.script(
            *[Reply(text=f"Reading {n}.", calls=(Call("read_file", {"path": f"{n}.txt"}),))
              for n in "abcd"],
            too_long,
            Reply(text="SUMMARY: read a and b."),
            Reply(text="Read them all."),
        )
        events = ndjson(sparrow("run", "Read the files.", "-w", str(workspace), "-m",
                                "fake:fake-model", "--json").stdout)
        sent = vendor.last("/v1/chat/completions").body
    compaction = next(e for e in events if e["type"] == "compacted")
    assert compaction["reason"].startswith("the model said:")
    assert compaction["summarised_by"] == "fake:fake-model"
    assert events[-1]["status"] == "completed"
    assert "SUMMARY: read a and b." in json.dumps(sent["messages"][1])  # after the system prompt

    # Twice in a row: the run fails with one clear line, it does not loop.
    for name in "efgh":
        (workspace / f"{name}.txt").write_text(f"{name}\n")
    with FakeVendor() as vendor:
        config = sparrow_home / "config" / "config.toml"
        text = config.read_text()
        config.write_text(text[: text.index("[providers.fake]")] + f'[providers.fake]\nbase_url = '
                          f'"{vendor.base_url}/v1"\nkind = "openai-chat"\n')
        vendor.script(
            *[Reply(text=f"Reading {n}.", calls=(Call("read_file", {"path": f"{n}.txt"}),))
              for n in "efgh"],
            too_long, Reply(text="SUMMARY."), too_long,
        )
        failed = sparrow("run", "Read more.", "-w", str(workspace), "-m", "fake:fake-model",
                         "--json", check=False)
    last = ndjson(failed.stdout)[-1]
    assert last["type"] == "run_finished" and last["status"] == "failed"
    assert "context window" in last["reason"]
