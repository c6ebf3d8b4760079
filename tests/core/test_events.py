import json

import pytest

from server.core.events import (
    EVENT_TYPES,
    ApprovalRequested,
    ApprovalResolved,
    CheckpointCreated,
    Compacted,
    ContextAssembled,
    ContextUpdated,
    EventDecodeError,
    GateDecided,
    HookRan,
    MessageAdded,
    ModelRequested,
    Notice,
    RunFinished,
    RunStarted,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolRequested,
    ToolResult,
    TurnDiscarded,
    UsageReported,
    VerifyFinished,
    event_from_dict,
)

SAMPLES = [
    RunStarted(run_id="r", seq=1, ts=1.5, task="t", workspace="/w", model="demo", session_id="s"),
    TextDelta(run_id="r", seq=2, ts=1.6, turn=1, text="héllo"),
    ContextAssembled(
        run_id="r",
        seq=2,
        ts=1.55,
        system="You are Sparrow.",
        tools=[{"name": "read_file", "description": "Read.", "parameters": {"type": "object"}}],
        instructions="AGENTS.md",
        history=2,
    ),
    MessageAdded(run_id="r", seq=2, ts=1.56, index=2, message={"role": "user", "text": "go"}),
    ModelRequested(run_id="r", seq=2, ts=1.57, turn=1, messages=3),
    ThinkingDelta(run_id="r", seq=2, ts=1.58, turn=1, text="hmm"),
    ToolCallDelta(run_id="r", seq=2, ts=1.59, turn=1, call_id="c", tool="read_file", text='{"pa'),
    TurnDiscarded(run_id="r", seq=2, ts=1.6, turn=1, reason="the connection dropped"),
    ToolRequested(
        run_id="r",
        seq=3,
        ts=1.7,
        turn=1,
        call_id="c",
        tool="write_file",
        args={"path": "a", "content": "b"},
        risk="Mutating",
    ),
    ToolResult(
        run_id="r", seq=4, ts=1.8, turn=1, call_id="c", tool="write_file", ok=True, output="ok"
    ),
    UsageReported(run_id="r", seq=5, ts=1.9, turn=1, input_tokens=3, output_tokens=4),
    UsageReported(run_id="r", seq=5, ts=1.9, turn=2, input_tokens=3, cost_usd=0.0012),
    CheckpointCreated(
        run_id="r",
        seq=7,
        ts=1.95,
        turn=1,
        tool="write_file",
        checkpoint_id="c-1",
        files_changed=["a.txt"],
        files_changed_count=1,
        bytes_stored=12,
        duration_ms=3,
    ),
    GateDecided(
        run_id="r",
        seq=8,
        ts=2.1,
        turn=1,
        call_id="c",
        tool="run_shell",
        decision="allow",
        reason="allowed by rule Bash(npm test:*)",
        decided_by="rule",
        rule="Bash(npm test:*)",
        rule_id="p-1",
        mode="supervised",
        level=0.2,
        band="Supervised",
        needs_checkpoint=True,
    ),
    ApprovalRequested(
        run_id="r",
        seq=9,
        ts=2.2,
        turn=1,
        call_id="c",
        tool="write_file",
        args={"path": "a"},
        risk="Mutating",
        reason="Supervised · Mutating: Ask",
        suggested_rule="write_file(a)",
        timeout_seconds=300.0,
        expires_at=302.2,
    ),
    ApprovalResolved(
        run_id="r",
        seq=10,
        ts=2.3,
        call_id="c",
        decision="allow_always",
        by="web",
        rule="write_file(a)",
        scope="workspace",
    ),
    HookRan(
        run_id="r",
        seq=11,
        ts=2.4,
        hook_event="PreToolUse",
        command="./check.sh",
        exit_code=2,
        blocked=True,
        reason="no",
    ),
    Notice(run_id="r", seq=12, ts=2.5, turn=1, call_id="c", text="write_file ran"),
    VerifyFinished(
        run_id="r", seq=13, ts=2.6, turn=2, command="make test", ok=False, exit_code=1, output="x"
    ),
    ContextUpdated(
        run_id="r", seq=14, ts=2.7, turn=2, tokens=1900, measured_tokens=1800,
        estimated_tokens=100, window=8000, reserve=1000, compact_at=7000, ratio=0.2375,
        chars={"prompt": 1200, "memory": 0, "tools": 400, "attachments": 0, "transcript": 5000},
    ),
    Compacted(
        run_id="r", seq=15, ts=2.8, turn=3, reason="the conversation passed 120,000 characters",
        before_chars=130_000, after_chars=9_000, dropped=40, summary="read a.py; fixed b.py",
        summarised_by="extract", handoff_path="/w/.sparrow/handoff/x.md",
        messages=[{"role": "user", "text": "go"}],
    ),
    CheckpointCreated(
        run_id="r", seq=16, ts=2.9, turn=3, tool="write_file", checkpoint_id="c-0",
        files_changed=["a.txt"], files_changed_count=1, bytes_stored=12, duration_ms=3,
        baseline=True,
    ),
    RunFinished(run_id="r", seq=6, ts=2.0, status="completed", reason="done", turns=1),
]


def test_every_event_type_has_a_sample() -> None:
    assert {type(e).type for e in SAMPLES} == set(EVENT_TYPES)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.type)
def test_json_round_trip(event: object) -> None:
    data = json.loads(json.dumps(event.to_dict()))  # type: ignore[attr-defined]
    assert list(data)[:4] == ["type", "run_id", "seq", "ts"]
    assert event_from_dict(data) == event


def test_type_names_are_snake_case_and_match_the_issue() -> None:
    for name in ("run_started", "text_delta", "tool_requested", "tool_result", "run_finished"):
        assert name in EVENT_TYPES
    assert all(name == name.lower() and " " not in name for name in EVENT_TYPES)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "must be a JSON object"),
        ({"type": "nope", "run_id": "r"}, "unknown event type"),
        ({"type": "text_delta", "run_id": "r", "turn": 1}, "text"),
        (
            {"type": "text_delta", "run_id": "r", "turn": 1, "text": "", "extra": 1},
            "unexpected fields extra",
        ),
    ],
)
def test_malformed_events_are_clear_errors(data: object, message: str) -> None:
    with pytest.raises(EventDecodeError, match=message):
        event_from_dict(data)


def test_merged_deltas_keep_text_order_and_the_later_seq() -> None:
    a = TextDelta(run_id="r", seq=2, turn=1, text="ab")
    b = TextDelta(run_id="r", seq=3, turn=1, text="cd")
    merged = a.merged(b)
    assert (merged.text, merged.seq) == ("abcd", 3)
