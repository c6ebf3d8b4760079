"""The session monitor as the surfaces see it: one ``SessionMonitor`` per app,
polling in the app's task group, and the latest snapshot for every socket.

The feed subscribes to the monitor; whatever a poll reports (any number of
``SessionUpdated`` / ``SessionRemoved`` / ``LevelCrossed`` events) makes one new
snapshot, taken and rendered to JSON in a worker thread (a poll may hold the
monitor's lock), once, and shared by all connections. A socket that is slow
skips the snapshots it had no time for: it always sends the newest one, so
nothing queues up. Level crossings are kept (the last ``MAX_LEVELS``) and sent
to every socket in order, after the snapshot that shows them.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from pathlib import Path
from typing import Any

import anyio

from server.core.settings import MonitorSettings, SettingsError, load_settings
from server.monitor.reading import SessionReading
from server.runtime.session_monitor import LevelCrossed, MonitorEvent, SessionMonitor

log = logging.getLogger(__name__)

MAX_LEVELS = 64  # level crossings kept for sockets that are behind


def make_monitor(
    config_file: Path, state_dir: Path | None = None
) -> tuple[SessionMonitor, str | None]:
    """The monitor with the user's ``[monitor]`` settings, watching the folders
    discovery finds (``$CLAUDE_CONFIG_DIR``, ``~/.claude``, ``$CODEX_HOME``...).
    A broken setting does not stop the app: the defaults apply and the error is
    returned, for the UI to show."""
    try:
        return SessionMonitor(load_settings(config_file).monitor, state_dir=state_dir), None
    except (SettingsError, ValueError) as exc:
        log.warning("session monitor: using the default settings: %s", exc)
        return SessionMonitor(MonitorSettings(), state_dir=state_dir), str(exc)


class MonitorFeed:
    def __init__(self, monitor: SessionMonitor, settings_error: str | None = None) -> None:
        self.monitor = monitor
        self.settings_error = settings_error
        self.version = 0  # bumped by each new snapshot
        self.sessions_message = self.message([])
        self.levels: deque[tuple[int, str]] = deque(maxlen=MAX_LEVELS)  # (number, JSON)
        self.level_count = 0  # level crossings published so far
        self._pending: list[LevelCrossed] = []  # crossings waiting for their snapshot
        self._dirty = anyio.Event()
        self._published = anyio.Event()

    # --- what the surfaces get ---------------------------------------------------

    def state(self, readings: list[SessionReading]) -> dict[str, Any]:
        """The body of ``GET /api/monitor``: the sessions most urgent first, and where
        the monitor looks (for an empty state that says so)."""
        return {
            "sessions": [reading.to_dict() for reading in readings],
            "roots": [{"tool": root.tool, "path": root.path} for root in self.monitor.roots],
            "active_within_hours": self.monitor.settings.active_within_hours,
            "settings_error": self.settings_error,
        }

    def message(self, readings: list[SessionReading]) -> str:
        return json.dumps({"type": "monitor_sessions"} | self.state(readings), ensure_ascii=False)

    # In a worker thread: a poll may hold the monitor's lock, and a thousand
    # sessions take a while to render.

    async def current_state(self) -> dict[str, Any]:
        """The state now (``state``), without blocking the event loop."""
        return await anyio.to_thread.run_sync(lambda: self.state(self.monitor.snapshot()))

    async def current_message(self) -> str:
        """The ``monitor_sessions`` message of the state now."""
        return await anyio.to_thread.run_sync(lambda: self.message(self.monitor.snapshot()))

    async def wait(self, version: int) -> int:
        """Return the version of the first snapshot after ``version``, once there is one."""
        while self.version == version:
            await self._published.wait()
        return self.version

    def levels_after(self, count: int) -> list[str]:
        """The level-crossing messages numbered above ``count`` still kept."""
        return [text for number, text in self.levels if number > count]

    # --- following the monitor ----------------------------------------------------

    async def run(self) -> None:
        """Poll (``SessionMonitor.run``) and publish snapshots until cancelled. A
        failure of the monitor is logged and ends the monitoring, never the app."""
        unsubscribe = self.monitor.subscribe(self.on_event)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._watch)
                while True:
                    await self._dirty.wait()
                    self._dirty = anyio.Event()
                    # The crossings so far, then a snapshot that shows them all.
                    crossings, self._pending = self._pending, []
                    self._publish(await self.current_message(), crossings)
        finally:
            unsubscribe()

    async def _watch(self) -> None:
        try:
            await self.monitor.run()
        except Exception:
            log.exception("the session monitor stopped")

    def on_event(self, event: MonitorEvent) -> None:
        """The monitor's listener (on the event loop, once per event of a poll)."""
        if isinstance(event, LevelCrossed):
            self._pending.append(event)
        self._dirty.set()

    def _publish(self, message: str, crossings: list[LevelCrossed]) -> None:
        self.sessions_message = message
        for event in crossings:
            self.level_count += 1
            numbered = level_message(event) | {"number": self.level_count}
            text = json.dumps(numbered, ensure_ascii=False)
            self.levels.append((self.level_count, text))
        self.version += 1
        published, self._published = self._published, anyio.Event()
        published.set()


def level_message(event: LevelCrossed) -> dict[str, Any]:
    reading = event.reading
    return {
        "type": "monitor_level",
        "key": reading.key,
        "level": reading.level,
        "previous": event.previous,
        "rising": event.rising,
        "initial": event.initial,
        "reading": reading.to_dict(),
    }
