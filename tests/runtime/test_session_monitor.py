"""The watcher on real folders: new, growing, replaced, deleted and idle
transcripts of both tools; level crossings; the async loop."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import anyio
import pytest

from server.core.settings import MonitorSettings
from server.monitor.discovery import Root
from server.monitor.state import CLAUDE_CODE, CODEX
from server.runtime import session_monitor as sm
from server.runtime.session_monitor import (
    LevelCrossed,
    MonitorEvent,
    SessionMonitor,
    SessionRemoved,
    SessionUpdated,
)
from tests.monitor import transcripts as t


@pytest.fixture
def claude(tmp_path: Path) -> Path:
    return tmp_path / "claude" / "projects"


@pytest.fixture
def codex(tmp_path: Path) -> Path:
    return tmp_path / "codex"


@pytest.fixture
def monitor(claude: Path, codex: Path) -> SessionMonitor:
    roots = [Root(CLAUDE_CODE, str(claude)), Root(CODEX, str(codex / "sessions"))]
    return SessionMonitor(MonitorSettings(), roots=roots)


def of(events: list[MonitorEvent], kind: type) -> list:  # type: ignore[type-arg]
    return [e for e in events if isinstance(e, kind)]


def test_no_folders_yet_is_no_sessions(monitor: SessionMonitor) -> None:
    assert monitor.poll() == [] and monitor.snapshot() == []


def test_sessions_of_both_tools_most_urgent_first(
    monitor: SessionMonitor, claude: Path, codex: Path
) -> None:
    t.aged(t.write(claude / "-home-ada-a" / "s-ok.jsonl", t.context_line(20_000, "m")))
    t.aged(t.write(claude / "-home-ada-b" / "s-crit.jsonl", t.context_line(140_000, "m")))
    codex_file = t.write(
        t.codex_file(codex), t.codex_meta(), t.codex_turn(), t.codex_tokens(150_000)
    )
    t.aged(codex_file)
    started_before = SessionMonitor(MonitorSettings(), roots=monitor.roots)
    events = started_before.poll()
    assert len(of(events, SessionUpdated)) == 3
    crossed = of(events, LevelCrossed)
    assert {(e.reading.session_id, e.reading.level, e.initial) for e in crossed} == {
        ("s-crit", "critical", True),
        (t.CODEX_ID, "warning", True),
    }
    snapshot = started_before.snapshot()
    assert [(r.tool, r.level) for r in snapshot] == [
        (CLAUDE_CODE, "critical"),
        (CODEX, "warning"),
        (CLAUDE_CODE, "ok"),
    ]
    assert snapshot[1].model == t.CODEX_MODEL and snapshot[1].window == t.CODEX_WINDOW
    assert started_before.poll() == []  # nothing changed: nothing read, nothing said


def test_a_session_grown_since_the_start_is_a_live_crossing_on_the_first_poll(
    monitor: SessionMonitor, claude: Path
) -> None:
    """The app was starting while the session crossed: its first poll sees it
    above warning, and that is news to tell, not an old state."""
    t.write(claude / "-p" / "s1.jsonl", t.context_line(120_000, "m"))
    (crossed,) = of(monitor.poll(), LevelCrossed)
    assert (crossed.reading.level, crossed.rising, crossed.initial) == ("warning", True, False)


def test_a_write_stamped_a_tick_behind_the_clock_is_still_a_change_since_the_start(
    monitor: SessionMonitor, claude: Path
) -> None:
    """Linux stamps a write to a file nobody has stat'ed since its last change
    with the clock of the last tick, up to 10 ms behind time.time(): a session
    that grows just after the start can carry a time from just before it."""
    start = time.time()
    started = SessionMonitor(MonitorSettings(), roots=monitor.roots)
    path = t.write(claude / "-p" / "s1.jsonl", t.context_line(120_000, "m"))
    behind = start - 0.005  # written after the start, stamped by the last tick
    os.utime(path, (behind, behind))
    (crossed,) = of(started.poll(), LevelCrossed)
    assert (crossed.reading.level, crossed.rising, crossed.initial) == ("warning", True, False)


def test_appends_move_the_meter_and_cross_levels(monitor: SessionMonitor, claude: Path) -> None:
    path = t.write(claude / "-p" / "s1.jsonl", t.user("go"))
    events = monitor.poll()
    assert of(events, SessionUpdated)[0].reading.level == "unknown"
    assert of(events, LevelCrossed) == []
    t.append(path, t.context_line(50_000, "m1"))
    events = monitor.poll()
    assert of(events, SessionUpdated)[0].reading.level == "ok"
    assert of(events, LevelCrossed) == []  # from no figure to ok crosses no threshold
    t.append(path, t.context_line(105_000, "m2"))
    (crossed,) = of(monitor.poll(), LevelCrossed)
    assert (crossed.previous, crossed.reading.level, crossed.rising, crossed.initial) == (
        "ok",
        "warning",
        True,
        False,
    )
    t.append(path, t.context_line(131_000, "m3"))
    (crossed,) = of(monitor.poll(), LevelCrossed)
    assert crossed.reading.level == "critical" and crossed.reading.context_tokens == 131_000
    t.append(path, t.compact_boundary(pre=135_000, post=30_000), t.compact_summary())
    (crossed,) = of(monitor.poll(), LevelCrossed)
    assert (crossed.previous, crossed.reading.level, crossed.rising) == ("critical", "ok", False)
    assert crossed.reading.last_compaction is not None
    assert crossed.reading.last_compaction.pre_tokens == 135_000
    reading = monitor.reading(str(path))
    assert reading is not None
    assert [tokens for _, tokens in reading.trend] == [50_000, 105_000, 131_000, 30_000]


def test_new_files_and_subagents_are_found(monitor: SessionMonitor, claude: Path) -> None:
    t.write(claude / "-p" / "s1.jsonl", t.context_line(10_000, "m"))
    monitor.poll()
    t.write(
        claude / "-p" / "s1" / "subagents" / "agent-x.jsonl",
        t.context_line(7_000, "m", sidechain=True),
    )
    t.write(claude / "-q" / "s2.jsonl", t.context_line(8_000, "m"))
    (claude / "-p" / "s1" / "tool-results").mkdir()
    (claude / "-p" / "s1" / "tool-results" / "big.jsonl").write_text("{}\n")
    updated = {e.reading.session_id: e.reading for e in of(monitor.poll(), SessionUpdated)}
    assert set(updated) == {"agent-x", "s2"}
    assert updated["agent-x"].parent_session == "s1"
    assert updated["agent-x"].context_tokens == 7_000


def test_deleted_and_replaced_files(monitor: SessionMonitor, claude: Path) -> None:
    keep = t.write(claude / "-p" / "keep.jsonl", t.context_line(120_000, "m"))
    gone = t.write(claude / "-p" / "gone.jsonl", t.context_line(10_000, "m"))
    monitor.poll()
    gone.unlink()
    (removed,) = of(monitor.poll(), SessionRemoved)
    assert (removed.key, removed.session_id, removed.deleted) == (str(gone), "gone", True)
    shorter = t.write(claude / "tmp.jsonl.part", t.context_line(9_000, "x"))
    os.replace(shorter, keep)
    events = monitor.poll()
    assert of(events, SessionUpdated)[0].reading.context_tokens == 9_000
    assert [r.session_id for r in monitor.snapshot()] == ["keep"]
    # A whole project folder removed.
    for path in (claude / "-p").iterdir():
        path.unlink()
    (claude / "-p").rmdir()
    assert [e.key for e in of(monitor.poll(), SessionRemoved)] == [str(keep)]
    assert monitor.snapshot() == []


def test_idle_sessions_are_neither_read_nor_shown_until_written_to(
    claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [time.time()]
    monitor = SessionMonitor(
        MonitorSettings(active_within_hours=1.0),
        roots=[Root(CLAUDE_CODE, str(claude))],
        clock=lambda: now[0],
    )
    old = t.write(
        claude / "-p" / "old.jsonl", t.context_line(140_000, "m", ts="2025-01-01T00:00:00Z")
    )
    day_ago = now[0] - 86_400
    os.utime(old, (day_ago, day_ago))
    os.utime(claude / "-p", (day_ago, day_ago))
    fresh = t.write(claude / "-q" / "fresh.jsonl", t.context_line(20_000, "m"))
    monitor.poll()
    assert [r.session_id for r in monitor.snapshot()] == ["fresh"]
    t.append(old, t.context_line(141_000, "m2", ts="2025-01-01T00:00:01Z"))  # resumed
    seen: list[str] = []
    for _ in range(sm.IDLE_EVERY):  # idle files are looked at every IDLE_EVERY polls
        seen += [e.reading.session_id for e in of(monitor.poll(), SessionUpdated)]
    assert seen == ["old"]
    assert {r.session_id for r in monitor.snapshot()} == {"old", "fresh"}
    # An hour and more without writes: the session is no longer live.
    now[0] += 2 * 3600
    removed = [e.session_id for e in of(monitor.poll(), SessionRemoved)]
    assert sorted(removed) == ["fresh", "old"] and not any(
        e.deleted for e in of(monitor.poll(), SessionRemoved)
    )
    assert monitor.snapshot() == []
    assert fresh.exists()


def test_a_failing_listener_does_not_stop_the_others(
    monitor: SessionMonitor, claude: Path, caplog: pytest.LogCaptureFixture
) -> None:
    got: list[MonitorEvent] = []

    def broken(event: MonitorEvent) -> None:
        raise RuntimeError("listener bug")

    monitor.subscribe(broken)
    unsubscribe = monitor.subscribe(got.append)
    t.write(claude / "-p" / "s.jsonl", t.context_line(10_000, "m"))
    monitor.poll()
    assert len(got) == 1 and "listener failed" in caplog.text
    unsubscribe()
    t.append(claude / "-p" / "s.jsonl", t.context_line(11_000, "m2"))
    monitor.poll()
    assert len(got) == 1


@pytest.mark.anyio
async def test_run_polls_and_calls_listeners_on_the_loop(
    monitor: SessionMonitor, claude: Path
) -> None:
    path = t.write(claude / "-p" / "s.jsonl", t.context_line(90_000, "m1"))
    crossings: list[LevelCrossed] = []
    seen, arrived = anyio.Event(), anyio.Event()

    def listener(event: MonitorEvent) -> None:
        if isinstance(event, SessionUpdated):
            seen.set()
        if isinstance(event, LevelCrossed):
            crossings.append(event)
            arrived.set()

    monitor.subscribe(listener)
    async with anyio.create_task_group() as tg:
        tg.start_soon(monitor.run, 0.02)
        # The first poll must have read the session at "ok" before it grows: a
        # first poll that only ran after the append would see unknown -> critical.
        with anyio.fail_after(10):
            await seen.wait()
        t.append(path, t.context_line(135_000, "m2"))
        with anyio.fail_after(10):
            await arrived.wait()
        tg.cancel_scope.cancel()
    assert [(c.previous, c.reading.level) for c in crossings] == [("ok", "critical")]


def test_many_sessions_keep_small_state(monitor: SessionMonitor, claude: Path) -> None:
    for n in range(200):
        t.write(
            claude / f"-p{n % 10}" / f"s{n}.jsonl",
            t.tool_result(20_000),
            t.context_line(1_000 + n, f"m{n}"),
        )
    monitor.poll()
    assert len(monitor.snapshot()) == 200
    # Per file: a cursor and a parser state, never lines.
    watched = next(iter(monitor._files.values()))
    assert watched.reader is not None
    assert not hasattr(watched.reader.state, "__dict__")
    assert not hasattr(watched.reader.tail, "__dict__")


def test_windows_from_the_price_data_are_kept_for_the_other_processes(
    claude: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    monitor = SessionMonitor(
        MonitorSettings(), roots=[Root(CLAUDE_CODE, str(claude))], state_dir=state
    )
    t.write(claude / "-p" / "s.jsonl", t.context_line(142_300, "m", model="claude-opus-5-5"))
    monitor.poll()
    [reading] = monitor.snapshot()
    assert (reading.window, reading.percent, reading.level) == (1_000_000, 14.2, "ok")
    kept = json.loads((state / "monitor" / "windows.json").read_text())
    assert kept["claude-code:claude-opus-5-5"]["window"] == 1_000_000
