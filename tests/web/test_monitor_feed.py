"""MonitorFeed on a real SessionMonitor over temporary folders: one snapshot per
poll however many sessions changed, level crossings published with (after) the
snapshot that shows them, and cancellation that unsubscribes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import anyio
import pytest

from server.core.settings import MonitorSettings
from server.monitor.discovery import Root
from server.monitor.state import CLAUDE_CODE
from server.runtime.session_monitor import MonitorEvent, SessionMonitor
from server.web.monitor_feed import MonitorFeed
from tests.monitor import transcripts as t
from tests.web.conftest import now

pytestmark = pytest.mark.anyio


class RecordingFeed(MonitorFeed):
    """The real feed, remembered, and counting what the monitor tells it."""

    made: ClassVar[list[RecordingFeed]] = []

    def __init__(self, monitor: SessionMonitor, settings_error: str | None = None) -> None:
        super().__init__(monitor, settings_error)
        self.heard = 0
        RecordingFeed.made.append(self)

    def on_event(self, event: MonitorEvent) -> None:
        self.heard += 1
        super().on_event(event)


def feed_over(projects: Path) -> RecordingFeed:
    # An hour between polls: the first poll is the only one unless a test polls.
    monitor = SessionMonitor(
        MonitorSettings(poll_seconds=3600.0), roots=[Root(CLAUDE_CODE, str(projects))]
    )
    return RecordingFeed(monitor)


async def test_one_poll_makes_one_snapshot_however_many_sessions(tmp_path: Path) -> None:
    for n, tokens in enumerate((10_000, 120_000, 135_000)):
        t.aged(t.write(tmp_path / "-p" / f"s{n}.jsonl", t.context_line(tokens, "m", ts=now(n))))
    feed = feed_over(tmp_path)
    async with anyio.create_task_group() as tg:
        tg.start_soon(feed.run)
        assert await feed.wait(0) == 1
        message = json.loads(feed.sessions_message)
        assert [s["level"] for s in message["sessions"]] == ["critical", "warning", "ok"]
        levels = [json.loads(text) for text in feed.levels_after(0)]
        assert sorted((m["level"], m["previous"], m["initial"]) for m in levels) == [
            ("critical", "unknown", True),
            ("warning", "unknown", True),
        ]
        assert (feed.version, feed.level_count) == (1, 2)
        tg.cancel_scope.cancel()


async def test_a_change_seen_by_a_poll_is_published_with_its_crossing(tmp_path: Path) -> None:
    path = t.write(tmp_path / "-p" / "s.jsonl", t.context_line(50_000, "m1", ts=now(1)))
    feed = feed_over(tmp_path)
    async with anyio.create_task_group() as tg:
        tg.start_soon(feed.run)
        await feed.wait(0)
        assert feed.levels_after(0) == []  # "ok" on the first poll is no crossing
        t.append(path, t.context_line(110_000, "m2", ts=now()))
        t.append(path, t.context_line(131_000, "m3", ts=now()))
        feed.monitor.poll()  # on the loop, as run() would: listeners are called here
        assert await feed.wait(1) == 2
        [session] = json.loads(feed.sessions_message)["sessions"]
        assert (session["context_tokens"], session["level"]) == (131_000, "critical")
        [crossed] = [json.loads(text) for text in feed.levels_after(0)]
        assert (crossed["previous"], crossed["level"], crossed["rising"]) == (
            "ok",
            "critical",
            True,
        )
        tg.cancel_scope.cancel()


async def test_cancelling_the_feed_unsubscribes_it(tmp_path: Path) -> None:
    path = t.write(tmp_path / "-p" / "s.jsonl", t.context_line(50_000, "m1", ts=now(1)))
    feed = feed_over(tmp_path)
    async with anyio.create_task_group() as tg:
        tg.start_soon(feed.run)
        await feed.wait(0)
        tg.cancel_scope.cancel()
    heard = feed.heard
    t.append(path, t.context_line(140_000, "m2", ts=now()))
    assert feed.monitor.poll(), "the monitor sees the change when asked"
    assert feed.heard == heard, "the cancelled feed still listens to the monitor"
