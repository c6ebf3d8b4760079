"""Claude Code transcripts: the context of the last real assistant line, and
every edge case of the reference's test plan and of the issue."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.monitor.levels import CRITICAL, OK, UNKNOWN, WARNING, MonitorConfig, assess
from server.monitor.reader import (
    GONE,
    REREAD,
    UNCHANGED,
    UPDATED,
    SessionReader,
    read_transcript,
)
from server.monitor.state import CLAUDE_CODE, MAX_SAMPLES, SessionState
from tests.monitor import transcripts as t

BIG = 400 * 1024 * 1024 + 1


def reader_for(path: Path, subagent: bool = False) -> SessionReader:
    return SessionReader(SessionState(CLAUDE_CODE, str(path)), subagent)


def tokens_of(path: Path, subagent: bool = False) -> int | None:
    state, _ = read_transcript(str(path), CLAUDE_CODE, subagent=subagent)
    return state.context_tokens


def test_context_is_input_plus_cache_creation_plus_cache_read(tmp_path: Path) -> None:
    path = t.write(
        tmp_path / "s.jsonl",
        t.user("hello"),
        t.assistant(10, 2_000, 30_000, 7, message_id="msg_a"),
        t.tool_result(500),
        t.assistant(8, 2_281, 33_640, 1, message_id="msg_b"),
        t.user("thanks"),
    )
    state, readable = read_transcript(str(path))
    assert readable
    assert state.context_tokens == 8 + 2_281 + 33_640
    assert state.model == t.MODEL and state.project == t.CWD


def test_missing_file(tmp_path: Path) -> None:
    state, readable = read_transcript(str(tmp_path / "not-yet.jsonl"))
    assert not readable and state.context_tokens is None
    assert assess(state, MonitorConfig()).level == UNKNOWN
    reader = reader_for(tmp_path / "not-yet.jsonl")
    assert reader.refresh() == GONE


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    state, readable = read_transcript(str(path))
    assert readable and state.context_tokens is None and state.compactions == []


def test_no_assistant_lines_yet(tmp_path: Path) -> None:
    path = t.write(tmp_path / "s.jsonl", t.title(), t.progress(), t.user("start"), t.progress())
    state, readable = read_transcript(str(path))
    assert readable and state.context_tokens is None and state.model is None
    assert assess(state, MonitorConfig()).level == UNKNOWN


def test_streamed_duplicate_lines_are_one_response(tmp_path: Path) -> None:
    path = t.write(
        tmp_path / "s.jsonl",
        t.context_line(50_000, "msg_a"),
        # One response streamed as three lines: same id, same input side, one block each.
        t.assistant(5, 1_000, 60_000, 2, message_id="msg_b", content=[{"type": "thinking"}]),
        t.assistant(5, 1_000, 60_000, 9, message_id="msg_b", content=[t.tool_use("toolu_1")]),
        t.assistant(5, 1_000, 60_000, 30, message_id="msg_b", content=[t.tool_use("toolu_2")]),
    )
    reader = reader_for(path)
    reader.refresh()
    state = reader.state
    assert state.context_tokens == 61_005
    assert [tokens for _, tokens in state.samples] == [50_000, 61_005]
    assert state.tool_calls == 2
    # The same response streamed again (an older version repeats blocks): no new count.
    t.append(
        path,
        t.assistant(5, 1_000, 60_000, 31, message_id="msg_b", content=[t.tool_use("toolu_2")]),
    )
    assert reader.refresh() == UPDATED
    assert state.tool_calls == 2 and len(state.samples) == 2


def test_sidechain_synthetic_and_all_zero_lines_do_not_count(tmp_path: Path) -> None:
    path = t.write(
        tmp_path / "s.jsonl",
        t.context_line(70_000, "msg_real"),
        t.context_line(5_000, "msg_side", sidechain=True),
        t.assistant(0, 0, 0, 0, message_id="msg_synth", model="<synthetic>"),
        t.assistant(0, 0, 0, 0, message_id="msg_zero"),
        t.context_line(9_999, "msg_synth2", model="<synthetic>"),
    )
    state, _ = read_transcript(str(path))
    assert state.context_tokens == 70_000 and state.model == t.MODEL


def test_a_subagents_own_transcript_counts_its_sidechain_lines(tmp_path: Path) -> None:
    path = t.write(
        tmp_path / "agent-a1b2.jsonl",
        t.user("find the bug", sidechain=True),
        t.context_line(12_345, "msg_sub", sidechain=True),
    )
    assert tokens_of(path, subagent=True) == 12_345
    assert tokens_of(path, subagent=False) is None


def test_a_compaction_boundary(tmp_path: Path) -> None:
    path = t.write(
        tmp_path / "s.jsonl",
        t.context_line(150_000, "msg_a", ts="2025-10-01T12:00:00Z"),
        t.compact_boundary(pre=155_123, post=None, ts="2025-10-01T12:01:00Z"),
        t.compact_summary(ts="2025-10-01T12:01:00Z"),
    )
    reader = reader_for(path)
    reader.refresh()
    state = reader.state
    assert len(state.compactions) == 1  # the summary line after the boundary is the same one
    (compaction,) = state.compactions
    assert compaction.trigger == "auto" and compaction.pre_tokens == 155_123
    assert compaction.post_tokens is None and compaction.at is not None
    # Usage from before the boundary is stale: no figure until the next assistant line.
    assert state.context_tokens is None and state.after_compaction
    found = assess(state, MonitorConfig())
    assert found.level == OK and found.source == "compaction"
    t.append(path, t.user("continue"), t.context_line(31_000, "msg_b"))
    assert reader.refresh() == UPDATED
    assert state.context_tokens == 31_000 and not state.after_compaction


def test_a_compaction_with_post_tokens_gives_the_new_size(tmp_path: Path) -> None:
    path = t.write(
        tmp_path / "s.jsonl",
        t.context_line(160_000, "msg_a"),
        t.compact_boundary(pre=160_050, post=42_000, trigger="manual"),
        t.compact_summary(),
    )
    state, _ = read_transcript(str(path))
    assert state.context_tokens == 42_000
    assert state.compactions[0].trigger == "manual"
    assert state.compactions[0].post_tokens == 42_000


def test_an_older_version_marks_compaction_only_with_the_summary_line(tmp_path: Path) -> None:
    path = t.write(
        tmp_path / "s.jsonl",
        t.context_line(140_000, "msg_a"),
        t.compact_summary(),
        t.title("Session title"),  # summary lines are titles, never compactions
    )
    state, _ = read_transcript(str(path))
    assert len(state.compactions) == 1
    assert state.compactions[0].pre_tokens == 140_000  # the last usage before it
    assert state.context_tokens is None


def test_summary_title_lines_are_not_compactions(tmp_path: Path) -> None:
    path = t.write(tmp_path / "s.jsonl", t.title("a"), t.context_line(1_500, "m"), t.title("b"))
    state, _ = read_transcript(str(path))
    assert state.compactions == [] and state.context_tokens == 1_500


def test_malformed_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        t.line(t.context_line(20_000, "m1"))
        + b'{"type":"assistant","message": {broken\n'
        + b"\x00\xff not json at all\n"
        + b"[1, 2, 3]\n"
        + t.line(t.context_line(21_000, "m2"))
        + b'{"type":"assistant","message":{"usage":"nope"}}\n'
    )
    reader = reader_for(path)
    reader.refresh()
    assert reader.state.context_tokens == 21_000
    assert reader.state.malformed_lines == 1  # the one that looked relevant; the rest unparsed


def test_a_partial_last_line_is_ignored_until_complete(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    whole = t.line(t.context_line(99_000, "m2"))
    path.write_bytes(t.line(t.context_line(50_000, "m1")) + whole[:40])
    reader = reader_for(path)
    reader.refresh()
    assert reader.state.context_tokens == 50_000
    with path.open("ab") as handle:
        handle.write(whole[40:])
    assert reader.refresh() == UPDATED
    assert reader.state.context_tokens == 99_000


def test_rapid_appends(tmp_path: Path) -> None:
    path = t.write(tmp_path / "s.jsonl", t.user("go"))
    reader = reader_for(path)
    reader.refresh()
    for n in range(1, 121):
        t.append(path, t.tool_result(300), t.context_line(1_000 * n + 8, f"m{n}"))
        if n % 3 == 0:  # several appends between two reads, as under load
            assert reader.refresh() == UPDATED
            assert reader.state.context_tokens == 1_000 * n + 8
    assert reader.refresh() == UNCHANGED
    assert len(reader.state.samples) == MAX_SAMPLES
    assert reader.state.samples[-1][1] == 120_008


def test_a_file_replaced_by_a_shorter_one(tmp_path: Path) -> None:
    path = t.write(
        tmp_path / "s.jsonl",
        *[t.context_line(10_000 * n, f"m{n}") for n in range(1, 15)],
    )
    reader = reader_for(path)
    reader.refresh()
    assert reader.state.context_tokens == 140_000
    shorter = t.write(tmp_path / "new.jsonl", t.context_line(3_000, "x1"))
    os.replace(shorter, path)
    assert reader.refresh() == REREAD
    assert reader.state.context_tokens == 3_000
    assert [tokens for _, tokens in reader.state.samples] == [3_000]
    path.write_bytes(t.line(t.user("truncated in place")))  # same inode, shorter
    assert reader.refresh() == REREAD
    assert reader.state.context_tokens is None


def test_levels_from_a_transcript(tmp_path: Path) -> None:
    config = MonitorConfig()
    for tokens, level in [
        (99_999, OK),
        (100_000, WARNING),
        (129_999, WARNING),
        (130_000, CRITICAL),
    ]:
        path = t.write(tmp_path / f"{tokens}.jsonl", t.context_line(tokens, "m"))
        state, _ = read_transcript(str(path))
        assert assess(state, config).level == level


# --- a 400 MB+ transcript ---------------------------------------------------------------


@pytest.fixture(scope="module")
def huge_transcript(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real 400 MB+ transcript: one 4 MB block of tool results and responses
    written many times, then a known ending. Deleted afterwards."""
    path = tmp_path_factory.mktemp("huge") / "big-session.jsonl"
    block = b"".join(
        t.line(t.tool_result(40_000, f"toolu_{n}")) + t.line(t.context_line(60_000 + n, f"m{n}"))
        for n in range(100)
    )
    with path.open("wb") as handle:
        while handle.tell() < BIG:
            handle.write(block)
        handle.write(t.line(t.context_line(150_000, "m_before")))
        handle.write(t.line(t.compact_boundary(pre=152_000, post=None)))
        handle.write(t.line(t.compact_summary()))
        handle.write(t.line(t.tool_result(20_000)))
        handle.write(t.line(t.context_line(121_000, "m_last")))
        handle.write(t.line(t.tool_result(30_000)))
    yield path
    path.unlink()


def test_a_400_mb_transcript_is_read_from_its_tail(huge_transcript: Path) -> None:
    assert huge_transcript.stat().st_size > BIG
    reader = reader_for(huge_transcript)
    assert reader.refresh(history=False) == REREAD
    state = reader.state
    assert state.context_tokens == 121_000 and state.model == t.MODEL
    assert reader.tail.bytes_read < 256 * 1024  # never the whole file
    # With the history the watcher reads for its trend line, still a sliver of it.
    watcher = reader_for(huge_transcript)
    watcher.refresh(history=True)
    assert watcher.state.context_tokens == 121_000 and len(watcher.state.samples) >= 3
    assert [c.pre_tokens for c in watcher.state.compactions] == [152_000]
    assert watcher.tail.bytes_read < 2 * 1024 * 1024


def test_a_400_mb_transcript_after_an_append_reads_only_the_append(
    huge_transcript: Path,
) -> None:
    reader = reader_for(huge_transcript)
    reader.refresh(history=False)
    size = huge_transcript.stat().st_size
    try:
        added = t.line(t.context_line(131_000, "m_new"))
        with huge_transcript.open("ab") as handle:
            handle.write(added)
        before = reader.tail.bytes_read
        assert reader.refresh() == UPDATED
        assert reader.state.context_tokens == 131_000
        assert reader.tail.bytes_read - before == len(added) + 1
    finally:
        os.truncate(huge_transcript, size)
