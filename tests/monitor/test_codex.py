"""Codex rollouts: token_count events, ``info: null``, compactions, the window."""

from __future__ import annotations

import os
from pathlib import Path

from server.monitor.levels import OK, UNKNOWN, WARNING, MonitorConfig, assess
from server.monitor.reader import REREAD, UPDATED, SessionReader, read_transcript
from server.monitor.state import CODEX, SessionState
from tests.monitor import transcripts as t


def reader_for(path: Path) -> SessionReader:
    return SessionReader(SessionState(CODEX, str(path)))


def test_context_and_window_from_the_last_token_count(tmp_path: Path) -> None:
    path = t.write(
        t.codex_file(tmp_path),
        t.codex_meta(),
        t.codex_turn(),
        t.codex_tokens(40_000, cumulative=40_000),
        t.codex_call(),
        t.codex_output(),
        t.codex_tokens(55_500, cumulative=95_500),
    )
    state, readable = read_transcript(str(path), CODEX)
    assert readable
    assert state.context_tokens == 55_500  # last_token_usage, not the cumulative total
    assert state.reported_window == t.CODEX_WINDOW
    assert state.model == t.CODEX_MODEL and state.project == t.CWD
    found = assess(state, MonitorConfig())
    assert found.window == t.CODEX_WINDOW and found.level == OK


def test_info_null_on_early_events(tmp_path: Path) -> None:
    path = t.write(t.codex_file(tmp_path), t.codex_meta(), t.codex_turn(), t.codex_tokens(None))
    reader = reader_for(path)
    reader.refresh()
    assert reader.state.context_tokens is None
    assert assess(reader.state, MonitorConfig()).level == UNKNOWN
    t.append(path, t.codex_tokens(None), t.codex_tokens(150_000))
    assert reader.refresh() == UPDATED
    assert reader.state.context_tokens == 150_000
    # Codex thresholds are fractions of its stated window: 0.5 x 272K = 136K.
    assert assess(reader.state, MonitorConfig()).level == WARNING


def test_repeated_token_count_events_make_one_sample(tmp_path: Path) -> None:
    path = t.write(
        t.codex_file(tmp_path),
        t.codex_tokens(10_000, cumulative=10_000),
        t.codex_tokens(10_000, cumulative=10_000),
        t.codex_tokens(12_000, cumulative=22_000),
    )
    reader = reader_for(path)
    reader.refresh()
    assert [tokens for _, tokens in reader.state.samples] == [10_000, 12_000]


def test_a_compaction_by_line_and_by_event_is_one(tmp_path: Path) -> None:
    path = t.write(
        t.codex_file(tmp_path),
        t.codex_turn(),
        t.codex_tokens(200_000, cumulative=900_000),
        t.codex_compacted(),
        t.codex_compacted_event(),
    )
    reader = reader_for(path)
    reader.refresh()
    state = reader.state
    assert len(state.compactions) == 1 and state.compactions[0].pre_tokens == 200_000
    assert state.context_tokens is None and state.after_compaction
    t.append(path, t.codex_tokens(30_000, cumulative=930_000), t.codex_compacted_event())
    reader.refresh()
    assert len(state.compactions) == 2  # a later compaction, after new usage


def test_tool_calls_are_counted(tmp_path: Path) -> None:
    path = t.write(t.codex_file(tmp_path), t.codex_meta(), t.codex_tokens(None))
    reader = reader_for(path)
    reader.refresh()
    for _ in range(7):
        t.append(path, t.codex_call(), t.codex_output())
    reader.refresh()
    assert reader.state.tool_calls == 7
    config = MonitorConfig(fallback_tool_count=5)
    found = assess(reader.state, config)
    assert found.level == WARNING and found.source == "tool_calls"


def test_the_first_line_names_the_folder_of_a_long_rollout(tmp_path: Path) -> None:
    """The backward scan stops near the end (after a few MB without the model's
    name); the session's folder is then read from line one."""
    path = t.codex_file(tmp_path)
    t.write(path, t.codex_meta(cwd="/srv/app"), *[t.codex_output(4_000) for _ in range(1_000)])
    t.append(path, t.codex_tokens(77_000), *[t.codex_output(4_000) for _ in range(1_300)])
    reader = reader_for(path)
    reader.refresh()
    assert reader.state.context_tokens == 77_000
    assert reader.state.project == "/srv/app" and reader.state.model is None
    assert reader.tail.bytes_read < path.stat().st_size


def test_a_rollout_replaced_by_a_shorter_one(tmp_path: Path) -> None:
    path = t.write(t.codex_file(tmp_path), t.codex_turn(), t.codex_tokens(180_000))
    reader = reader_for(path)
    reader.refresh()
    other = t.write(tmp_path / "other.jsonl", t.codex_tokens(9_000))
    os.replace(other, path)
    assert reader.refresh() == REREAD
    assert reader.state.context_tokens == 9_000


def test_empty_and_partial_rollouts(tmp_path: Path) -> None:
    path = t.codex_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    reader = reader_for(path)
    reader.refresh()
    assert reader.state.context_tokens is None
    whole = t.line(t.codex_tokens(64_000))
    with path.open("ab") as handle:
        handle.write(whole[:30])
    reader.refresh()
    assert reader.state.context_tokens is None
    with path.open("ab") as handle:
        handle.write(whole[30:])
    reader.refresh()
    assert reader.state.context_tokens == 64_000
