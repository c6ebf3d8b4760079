"""The session monitor: watches Claude Code and Codex transcript folders and
keeps a context meter for each live session.

Polling with ``os.scandir`` and ``os.stat``, no third-party watcher: a poll
stats the folders and the live files (a few microseconds each) and reads only
what was appended. A folder is listed again only when its mtime changes (a file
was created or deleted in it). Files not written to within
``active_within_hours`` are not read and not shown, and are looked at only
every ``IDLE_EVERY`` polls, until one is written to again. Per file the monitor
keeps a tail cursor and the parser's small state, never the lines.

    monitor = SessionMonitor(settings.monitor)
    monitor.subscribe(listener)        # SessionUpdated, SessionRemoved, LevelCrossed
    await monitor.run()                # polls until cancelled; listeners run on the loop
    monitor.snapshot()                 # live sessions, most urgent first
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import anyio

from server.core.settings import MonitorSettings
from server.monitor.discovery import Root, describe, scan_folder, session_roots
from server.monitor.levels import RANK, UNKNOWN, WARNING, MonitorConfig
from server.monitor.reader import GONE, UNCHANGED, UNREADABLE, SessionReader
from server.monitor.reading import SessionReading, by_urgency, reading_of
from server.monitor.state import SessionState
from server.monitor.windows import state_lookup

log = logging.getLogger(__name__)

IDLE_EVERY = 10  # idle files and folders are looked at every Nth poll
# How far a file's time may lag the clock it is compared with: Linux stamps a
# write with the clock of the last tick (up to 10 ms behind time.time()), and
# some file systems keep whole seconds. A change that close before the start
# is told as live: a notice too many beats a crossing missed.
FILE_TIME_SLACK = 2.0


@dataclass(frozen=True)
class SessionUpdated:
    """A live session's meter moved (or the session was seen for the first time)."""

    type: ClassVar[str] = "session_updated"
    reading: SessionReading


@dataclass(frozen=True)
class SessionRemoved:
    """A session is no longer live: its file was deleted or it went idle."""

    type: ClassVar[str] = "session_removed"
    key: str
    tool: str
    session_id: str
    deleted: bool


@dataclass(frozen=True)
class LevelCrossed:
    """A session's level changed (``reading.level``), up or down. ``initial`` marks
    a session the monitor's first poll found already above a level, unchanged
    since the monitor started."""

    type: ClassVar[str] = "level_crossed"
    reading: SessionReading
    previous: str
    initial: bool = False

    @property
    def rising(self) -> bool:
        return RANK[self.reading.level] > RANK[self.previous]


MonitorEvent = SessionUpdated | SessionRemoved | LevelCrossed
Listener = Callable[[MonitorEvent], None]


class _File:
    __slots__ = ("idle_seen", "info", "level", "reader", "shown")

    def __init__(self, root: Root, path: str, parts: tuple[str, ...]) -> None:
        info = describe(root.tool, parts)
        assert info is not None
        self.info = info
        self.reader: SessionReader | None = None  # only while the session is live
        self.level = UNKNOWN
        self.idle_seen = 0  # the poll that last looked at this idle file
        self.shown = False  # a SessionUpdated went out: its end will be told


class _Folder:
    __slots__ = ("dirs", "files", "mtime_ns", "seen")

    def __init__(self) -> None:
        self.mtime_ns = -1
        self.dirs: list[str] = []
        self.files: list[str] = []
        self.seen = 0  # the poll that last stat'ed this folder


class SessionMonitor:
    def __init__(
        self,
        settings: MonitorSettings | None = None,
        *,
        roots: list[Root] | None = None,
        clock: Callable[[], float] = time.time,
        state_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        """``state_dir``: Sparrow's state folder, where the models' windows looked
        up in the price data are kept for every process (None: in memory only)."""
        self.settings = settings or MonitorSettings()
        self.config = MonitorConfig.from_settings(self.settings, lookup=state_lookup(state_dir))
        self.roots = session_roots() if roots is None else roots
        self._clock = clock
        self._files: dict[str, _File] = {}
        self._folders: dict[str, _Folder] = {}
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._polls = 0
        # Real time, as file times are (the clock may be a test's), less the lag
        # of a file's time stamp: a write just after this must count as after.
        self._started = time.time() - FILE_TIME_SLACK

    # --- the API --------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every event of ``run`` (or ``poll(notify=True)``).
        Returns the function that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def snapshot(self) -> list[SessionReading]:
        """Every live session, most urgent first."""
        with self._lock:
            states = [f.reader.state for f in self._files.values() if f.reader and f.shown]
            readings = [reading_of(state, self.config) for state in states]
        return by_urgency(readings)

    def reading(self, key: str) -> SessionReading | None:
        with self._lock:
            found = self._files.get(key)
            if found is None or found.reader is None or not found.shown:
                return None
            return reading_of(found.reader.state, self.config)

    async def run(self, interval: float | None = None) -> None:
        """Poll every ``interval`` seconds (default: the settings') until cancelled.
        Polls run in a worker thread; listeners are called here, on the event loop."""
        every = self.settings.poll_seconds if interval is None else interval
        while True:
            events = await anyio.to_thread.run_sync(self.poll, False)
            self._notify(events)
            await anyio.sleep(every)

    def poll(self, notify: bool = True) -> list[MonitorEvent]:
        """Look for new, grown and deleted transcripts; return what changed."""
        with self._lock:
            self._polls += 1
            events: list[MonitorEvent] = []
            present: set[str] = set()
            for root in self.roots:
                self._walk(root, root.path, (), present, events)
            for path in [p for p in self._files if p not in present]:
                self._forget(path, events, deleted=True)
                del self._files[path]
        if notify:
            self._notify(events)
        return events

    # --- folders --------------------------------------------------------------------

    def _walk(
        self,
        root: Root,
        folder_path: str,
        parts: tuple[str, ...],
        present: set[str],
        events: list[MonitorEvent],
    ) -> None:
        folder = self._folders.get(folder_path)
        if (
            folder is None
            or self._recent(folder.mtime_ns / 1e9)
            or self._polls - folder.seen >= IDLE_EVERY
        ):
            try:
                mtime_ns = os.stat(folder_path).st_mtime_ns
            except OSError:
                self._drop_folder(folder_path)
                return
            if folder is None:
                folder = self._folders[folder_path] = _Folder()
            folder.seen = self._polls
            if mtime_ns != folder.mtime_ns:
                folder.mtime_ns = mtime_ns
                self._list(root, folder_path, parts, folder)
        for path in folder.files:
            present.add(path)
            self._check_file(path, events)
        for sub in folder.dirs:
            self._walk(root, sub, (*parts, os.path.basename(sub)), present, events)

    def _list(self, root: Root, folder_path: str, parts: tuple[str, ...], folder: _Folder) -> None:
        try:
            dirs, found = scan_folder(root.tool, folder_path, parts)
        except OSError:
            return
        files = []
        for path, here, _ in found:
            files.append(path)
            if path not in self._files:
                self._files[path] = _File(root, path, here)
        for gone in set(folder.dirs) - set(dirs):
            self._drop_folder(gone)
        folder.dirs, folder.files = dirs, files

    def _drop_folder(self, folder_path: str) -> None:
        folder = self._folders.pop(folder_path, None)
        if folder is not None:
            for sub in folder.dirs:
                self._drop_folder(sub)

    # --- files ----------------------------------------------------------------------

    def _recent(self, when: float) -> bool:
        return when >= self._clock() - self.settings.active_within_hours * 3600

    def _check_file(self, path: str, events: list[MonitorEvent]) -> None:
        watched = self._files[path]
        reader = watched.reader
        if reader is None:
            if watched.idle_seen and self._polls - watched.idle_seen < IDLE_EVERY:
                return
            watched.idle_seen = self._polls
            try:
                mtime = os.stat(path).st_mtime
            except OSError:
                return
            if not self._recent(mtime):
                return
            info = watched.info
            state = SessionState(info.tool, path, info.session_id, info.parent_session)
            reader = watched.reader = SessionReader(state, info.subagent, info.project_hint)
        status = reader.refresh()
        if status == GONE:
            self._forget(path, events, deleted=True)
            return
        if status == UNREADABLE:  # tried again as an idle file, until it can be read
            self._forget(path, events, deleted=False)
            return
        if status == UNCHANGED:
            if not self._recent(reader.state.last_activity):
                self._forget(path, events, deleted=False)
            return
        reading = reading_of(reader.state, self.config)
        events.append(SessionUpdated(reading))
        watched.shown = True
        if reading.level != watched.level:
            first = watched.level == UNKNOWN
            if not first or RANK[reading.level] >= RANK[WARNING]:
                initial = first and self._polls == 1 and not self._changed_since_start(path)
                events.append(LevelCrossed(reading, watched.level, initial=initial))
            watched.level = reading.level

    def _changed_since_start(self, path: str) -> bool:
        # A session that grew while the app started is a crossing seen live, even
        # if the first poll is the one that reads it: it is told, not taken as old.
        try:
            return os.stat(path).st_mtime >= self._started
        except OSError:
            return False

    def _forget(self, path: str, events: list[MonitorEvent], deleted: bool) -> None:
        """Stop following ``path``: deleted, or idle for ``active_within_hours``."""
        watched = self._files.get(path)
        if watched is None:
            return
        if watched.reader is not None and watched.shown:
            state = watched.reader.state
            events.append(SessionRemoved(path, state.tool, state.session_id, deleted))
        watched.reader = None
        watched.shown = False
        watched.level = UNKNOWN
        watched.idle_seen = self._polls

    def _notify(self, events: list[MonitorEvent]) -> None:
        for event in events:
            for listener in list(self._listeners):
                try:
                    listener(event)
                except Exception:
                    log.exception("a session monitor listener failed on %s", event.type)
