"""``SessionReading``: what the surfaces get, and the urgency order."""

from __future__ import annotations

import json
from pathlib import Path

from server.monitor.levels import MonitorConfig
from server.monitor.reader import SessionReader
from server.monitor.reading import by_urgency, reading_of
from server.monitor.state import CLAUDE_CODE, SessionState
from tests.monitor import transcripts as t


def read(path: Path) -> SessionState:
    reader = SessionReader(SessionState(CLAUDE_CODE, str(path), "sid"))
    reader.refresh()
    return reader.state


def test_a_reading_has_every_figure_and_is_json(tmp_path: Path) -> None:
    path = t.write(
        tmp_path / "s.jsonl",
        t.context_line(90_000, "m1", ts="2025-10-01T12:00:00Z"),
        t.compact_boundary(pre=151_000, post=40_000, ts="2025-10-01T12:05:00Z"),
        t.compact_summary(),
        t.context_line(112_000, "m2", ts="2025-10-01T12:10:00Z"),
    )
    reading = reading_of(read(path), MonitorConfig())
    data = json.loads(json.dumps(reading.to_dict()))
    assert data["tool"] == "claude-code" and data["session_id"] == "sid"
    assert data["key"] == data["path"] == str(path)
    assert data["project"] == t.CWD and data["model"] == t.MODEL
    assert (data["context_tokens"], data["window"], data["percent"]) == (112_000, 200_000, 56.0)
    assert data["window_source"] == "price data"
    assert (data["level"], data["level_source"]) == ("warning", "usage")
    assert (data["warning_at"], data["critical_at"]) == (100_000, 130_000)
    assert data["last_compaction"] == {
        "at": 1759320300.0,
        "trigger": "auto",
        "pre_tokens": 151_000,
        "post_tokens": 40_000,
    }
    assert [tokens for _, tokens in data["trend"]] == [90_000, 40_000, 112_000]
    assert data["last_activity"] >= 1759320600.0


def test_most_urgent_first(tmp_path: Path) -> None:
    levels = {"ok": 20_000, "critical": 140_000, "warning": 110_000, "warning2": 120_000}
    readings = [
        reading_of(
            read(t.write(tmp_path / f"{name}.jsonl", t.context_line(tokens, "m"))), MonitorConfig()
        )
        for name, tokens in levels.items()
    ]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    readings.append(reading_of(read(empty), MonitorConfig()))
    ordered = [r.context_tokens for r in by_urgency(readings)]
    assert ordered == [140_000, 120_000, 110_000, 20_000, None]


def test_a_window_nobody_knows_is_null_and_so_is_the_percentage(tmp_path: Path) -> None:
    path = t.write(tmp_path / "s.jsonl", t.context_line(142_300, "m1", model="acme-coder-7"))
    data = json.loads(json.dumps(reading_of(read(path), MonitorConfig()).to_dict()))
    assert (data["context_tokens"], data["window"], data["window_source"]) == (142_300, None, None)
    assert (data["percent"], data["warning_at"], data["critical_at"]) == (None, None, None)
    assert (data["level"], data["level_source"]) == ("unknown", "no_window")
