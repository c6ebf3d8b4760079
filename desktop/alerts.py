"""Context warnings for the desktop, as a pure model: from the messages of the
app's own ``/ws/monitor`` (docs/api.md, "Session monitor") to

- the tray's state: the worst level across the live sessions, a tooltip and
  the name of the icon variant to show;
- the notifications to send: rising crossings seen live only (not the
  ``initial`` ones the server's first poll found), at most one per session
  per ``min_interval`` unless the level rises above the one last notified.

No Qt, no D-Bus, no sockets: the tray, the notifier and the client feed it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from server.core import formatting

UNKNOWN, OK, WARNING, CRITICAL = "unknown", "ok", "warning", "critical"
RANK = {UNKNOWN: 0, OK: 1, WARNING: 2, CRITICAL: 3}

ICON_NORMAL = "sparrow"
ICON_WARNING = "sparrow-warning"
ICON_CRITICAL = "sparrow-critical"
ICONS = {UNKNOWN: ICON_NORMAL, OK: ICON_NORMAL, WARNING: ICON_WARNING, CRITICAL: ICON_CRITICAL}

APP = "Sparrow"
DEFAULT_MIN_INTERVAL = 300.0  # seconds between two notices of one session (same level)


def rank(level: object) -> int:
    return RANK.get(level, 0) if isinstance(level, str) else 0


@dataclass(frozen=True)
class TrayState:
    level: str  # the worst level of the live sessions ("ok" when there are none)
    icon: str  # ICON_NORMAL | ICON_WARNING | ICON_CRITICAL
    tooltip: str
    sessions: int
    warning: int  # sessions at warning
    critical: int  # sessions at critical
    connected: bool


@dataclass(frozen=True)
class Notice:
    key: str  # the session's key (its transcript's path)
    level: str  # WARNING or CRITICAL
    title: str
    body: str
    urgent: bool  # critical: the notification asks for attention
    run_id: str = ""  # the run it is about: clicking it opens the window on that run
    # (key, label) buttons, shown where the daemon advertises "actions".
    actions: tuple[tuple[str, str], ...] = ()


def project_name(project: object) -> str:
    """The last folder of a session's project (Claude Code's escaped name as is)."""
    if not isinstance(project, str) or not project:
        return "a session"
    trimmed = project.rstrip("/\\")
    for sep in ("/", "\\"):
        if sep in trimmed:
            trimmed = trimmed.rsplit(sep, 1)[1]
    return trimmed or project


def _kilo(tokens: object) -> str | None:
    if isinstance(tokens, bool) or not isinstance(tokens, int | float):
        return None
    return formatting.tokens(int(tokens))


def describe(level: str, reading: Mapping[str, Any]) -> tuple[str, str]:
    """A notice's title and body: the figures, stated factually."""
    name = project_name(reading.get("project"))
    tool = reading.get("tool") if isinstance(reading.get("tool"), str) else "agent"
    title = f"Context {level}: {name}"
    used, window = _kilo(reading.get("context_tokens")), _kilo(reading.get("window"))
    percent = reading.get("percent")
    if used and window:
        figures = f"{used} of {window} tokens"
        if isinstance(percent, int | float) and not isinstance(percent, bool):
            figures += f" ({percent:.0f}%)"
    elif used:
        figures = f"{used} tokens (window unknown)"
    elif isinstance(reading.get("tool_calls"), int):
        figures = f"{reading['tool_calls']} tool calls (no token counts)"
    else:
        figures = "context size unknown"
    body = f"The {tool} session is at {figures}."
    if level == CRITICAL:
        body += " Compaction is near: ask the agent for a handoff doc."
    else:
        critical_at = _kilo(reading.get("critical_at"))
        if critical_at:
            body += f" Critical at {critical_at}."
    return title, body


def tooltip_for(sessions: int, warning: int, critical: int, connected: bool) -> str:
    if not connected:
        return f"{APP}: session monitor not connected"
    if sessions == 0:
        return f"{APP}: no live agent sessions"
    plural = "s" if sessions != 1 else ""
    if not warning and not critical:
        return f"{APP}: {sessions} session{plural}, context ok"
    parts = [f"{n} {name}" for n, name in ((critical, CRITICAL), (warning, WARNING)) if n]
    return f"{APP}: {sessions} session{plural}, " + ", ".join(parts)


class AlertModel:
    """Feed it every ``/ws/monitor`` message; read :attr:`tray`; send what it returns."""

    def __init__(
        self,
        *,
        min_interval: float = DEFAULT_MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._min_interval = min_interval
        self._clock = clock
        self._levels: dict[str, str] = {}  # key -> level, from the latest snapshot
        self._connected = False
        self._sent: dict[str, tuple[float, str]] = {}  # key -> (when, level) last notified
        self._last_number = 0  # of the crossings taken (a reconnect sends the kept ones again)
        self.tray = self._tray()

    def connected(self) -> None:
        """The socket is open (its first message will be the whole state)."""
        self._connected = True
        self.tray = self._tray()

    def disconnected(self) -> None:
        """The socket closed: the levels shown are no longer live."""
        self._connected = False
        self._levels = {}
        self.tray = self._tray()

    def handle(self, message: Mapping[str, Any]) -> list[Notice]:
        """Take one message; the notices to send now (usually none)."""
        kind = message.get("type")
        if kind == "monitor_sessions":
            self._take_snapshot(message)
            return []
        if kind == "monitor_level":
            notice = self._take_crossing(message)
            return [notice] if notice else []
        return []

    def _take_snapshot(self, message: Mapping[str, Any]) -> None:
        sessions = message.get("sessions")
        levels: dict[str, str] = {}
        if isinstance(sessions, list):
            for reading in sessions:
                if isinstance(reading, Mapping) and isinstance(reading.get("key"), str):
                    level = reading.get("level")
                    levels[reading["key"]] = level if level in RANK else UNKNOWN
        self._levels = levels
        self._connected = True
        # Forget old notices of sessions gone idle once their quiet time is over.
        now = self._clock()
        self._sent = {
            key: sent
            for key, sent in self._sent.items()
            if key in levels or now - sent[0] < self._min_interval
        }
        self.tray = self._tray()

    def _take_crossing(self, message: Mapping[str, Any]) -> Notice | None:
        key, level = message.get("key"), message.get("level")
        if not isinstance(key, str) or not isinstance(level, str) or level not in RANK:
            return None
        number = message.get("number")
        if isinstance(number, int):
            if number <= self._last_number:
                return None
            self._last_number = number
        if message.get("initial") or not message.get("rising") or rank(level) < RANK[WARNING]:
            return None
        now = self._clock()
        last = self._sent.get(key)
        if last is not None and now - last[0] < self._min_interval and rank(level) <= rank(last[1]):
            return None
        self._sent[key] = (now, level)
        reading = message.get("reading")
        title, body = describe(level, reading if isinstance(reading, Mapping) else {})
        return Notice(key=key, level=level, title=title, body=body, urgent=level == CRITICAL)

    def _tray(self) -> TrayState:
        levels = list(self._levels.values())
        worst = max(levels, key=rank, default=OK)
        if rank(worst) < RANK[OK]:
            worst = OK
        warning = levels.count(WARNING)
        critical = levels.count(CRITICAL)
        return TrayState(
            level=worst,
            icon=ICONS[worst],
            tooltip=tooltip_for(len(levels), warning, critical, self._connected),
            sessions=len(levels),
            warning=warning,
            critical=critical,
            connected=self._connected,
        )
