"""``sparrow monitor``: ``--once`` as a table or NDJSON, and live."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.monitor import transcripts as t

SPARROW = shutil.which("sparrow", path=str(Path(sys.executable).parent)) or "sparrow"


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Claude Code's and Codex's folders, in tmp_path (never the user's own)."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    return claude / "projects", codex


def sparrow(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([SPARROW, *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result


def test_once_json_lists_live_sessions_most_urgent_first(tools: tuple[Path, Path]) -> None:
    claude, codex = tools
    t.write(claude / "-home-ada-calm" / "calm.jsonl", t.context_line(30_000, "m"))
    t.write(
        claude / "-home-ada-hot" / "hot.jsonl",
        t.context_line(133_000, "m"),
        t.compact_boundary(pre=150_000, post=None),
        t.compact_summary(),
        t.context_line(133_000, "m2"),
    )
    t.write(
        t.codex_file(codex),
        t.codex_meta(cwd="/srv/x"),
        t.codex_turn(cwd="/srv/x"),
        t.codex_tokens(None),
        t.codex_tokens(140_000),
    )
    lines = [json.loads(x) for x in sparrow("monitor", "--once", "--json").stdout.splitlines()]
    assert [(x["session_id"], x["level"]) for x in lines] == [
        ("hot", "critical"),
        (t.CODEX_ID, "warning"),
        ("calm", "ok"),
    ]
    assert lines[0]["last_compaction"]["pre_tokens"] == 150_000
    assert lines[1]["project"] == "/srv/x" and lines[1]["window"] == t.CODEX_WINDOW


def test_once_as_a_table(tools: tuple[Path, Path]) -> None:
    claude, _ = tools
    t.write(claude / "-p" / "s.jsonl", t.context_line(112_000, "m", cwd="/work/engine"))
    out = sparrow("monitor", "--once").stdout
    header, row = out.splitlines()
    assert header.split()[:5] == ["LEVEL", "TOOL", "PROJECT", "MODEL", "CONTEXT"]
    assert row.startswith("warning") and "claude-code" in row and "/work/engine" in row
    assert "112k / 200k  56%" in row and "\x1b[" not in row


def test_a_1m_window_model_is_drawn_against_its_window(tools: tuple[Path, Path]) -> None:
    claude, _ = tools
    t.write(claude / "-p" / "s.jsonl", t.context_line(142_300, "m", model="claude-opus-5-5"))
    [line] = [json.loads(x) for x in sparrow("monitor", "--once", "--json").stdout.splitlines()]
    assert (line["window"], line["window_source"], line["percent"], line["level"]) == (
        1_000_000,
        "price data",
        14.2,
        "ok",
    )
    row = sparrow("monitor", "--once").stdout.splitlines()[1]
    assert row.startswith("ok") and "142k / 1M  14%" in row


def test_a_window_nobody_knows_is_said_not_guessed(tools: tuple[Path, Path]) -> None:
    claude, _ = tools
    t.write(claude / "-p" / "s.jsonl", t.context_line(142_300, "m", model="acme-coder-7"))
    [line] = [json.loads(x) for x in sparrow("monitor", "--once", "--json").stdout.splitlines()]
    assert (line["window"], line["percent"], line["level"]) == (None, None, "unknown")
    row = sparrow("monitor", "--once").stdout.splitlines()[1]
    assert "142k / window unknown" in row and "%" not in row


def test_no_sessions_says_where_it_looked(tools: tuple[Path, Path]) -> None:
    out = sparrow("monitor", "--once").stdout
    assert out.startswith("no live sessions") and str(tools[0]) in out


def test_live_json_streams_changes_until_interrupted(tools: tuple[Path, Path]) -> None:
    claude, _ = tools
    path = t.write(claude / "-p" / "s.jsonl", t.context_line(90_000, "m1"))
    process = subprocess.Popen(
        [SPARROW, "monitor", "--json", "--interval", "0.1"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    timer = threading.Timer(60, process.kill)  # a safety net, not a timing assertion
    timer.start()
    try:
        first = json.loads(process.stdout.readline())
        assert first["type"] == "session_updated" and first["reading"]["level"] == "ok"
        t.append(path, t.context_line(131_000, "m2"))
        events = [json.loads(process.stdout.readline()) for _ in range(2)]
        assert [e["type"] for e in events] == ["session_updated", "level_crossed"]
        assert (events[1]["previous"], events[1]["reading"]["level"], events[1]["rising"]) == (
            "ok",
            "critical",
            True,
        )
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        timer.cancel()
        process.kill()
        process.wait()
        process.stdout.close()


def test_a_bad_setting_is_a_clear_error(tools: tuple[Path, Path], sparrow_home: Path) -> None:
    config = sparrow_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text("[monitor]\npoll_seconds = 'fast'\n")
    result = subprocess.run(
        [SPARROW, "monitor", "--once"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert result.returncode == 1
    assert "config.toml: [monitor] poll_seconds: expected float" in result.stderr
