"""``SessionReading``: one session's meter at one moment, as the surfaces show it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.monitor.levels import RANK, Assessment, MonitorConfig, assess
from server.monitor.state import Compaction, SessionState


@dataclass(frozen=True)
class SessionReading:
    tool: str  # "claude-code" or "codex"
    session_id: str
    path: str  # the transcript; also the reading's key
    project: str  # the session's working folder (or Claude's folder name for it)
    model: str | None
    context_tokens: int | None  # None: no usage yet, or compacted since the last one
    window: int | None  # None: not known (no percentage then)
    percent: float | None
    level: str  # "unknown", "ok", "warning", "critical"
    level_source: str  # "usage", "compaction", "tool_calls" (fallback), "no_window" or "none"
    warning_at: int | None  # the thresholds in tokens for this window (None: a share of
    critical_at: int | None  # a window not known)
    last_activity: float  # seconds since the epoch
    tool_calls: int  # seen since the watcher started reading the file
    after_compaction: bool
    compactions: tuple[Compaction, ...] = ()  # the most recent, oldest first
    trend: tuple[tuple[float, int], ...] = ()  # (when, context tokens), oldest first
    parent_session: str | None = None  # a subagent's session
    window_source: str | None = None  # "transcript", "settings", "price data", "long context"

    @property
    def key(self) -> str:
        return self.path

    @property
    def last_compaction(self) -> Compaction | None:
        return self.compactions[-1] if self.compactions else None

    def urgency(self) -> tuple[int, float, float]:
        """Sorts most urgent first: level, then fill, then the most recently active."""
        return (-RANK[self.level], -(self.percent or 0.0), -self.last_activity)

    def to_dict(self) -> dict[str, Any]:
        last = self.last_compaction
        return {
            "key": self.key,
            "tool": self.tool,
            "session_id": self.session_id,
            "parent_session": self.parent_session,
            "path": self.path,
            "project": self.project,
            "model": self.model,
            "context_tokens": self.context_tokens,
            "window": self.window,
            "window_source": self.window_source,
            "percent": self.percent,
            "level": self.level,
            "level_source": self.level_source,
            "warning_at": self.warning_at,
            "critical_at": self.critical_at,
            "last_activity": self.last_activity,
            "tool_calls": self.tool_calls,
            "after_compaction": self.after_compaction,
            "compactions": [c.to_dict() for c in self.compactions],
            "last_compaction": None if last is None else last.to_dict(),
            "trend": [list(sample) for sample in self.trend],
        }


def reading_of(state: SessionState, config: MonitorConfig) -> SessionReading:
    found: Assessment = assess(state, config)
    return SessionReading(
        tool=state.tool,
        session_id=state.session_id,
        path=state.path,
        project=state.project,
        model=state.model,
        context_tokens=found.tokens,
        window=found.window,
        window_source=found.window_source,
        percent=found.percent,
        level=found.level,
        level_source=found.source,
        warning_at=found.warning_at,
        critical_at=found.critical_at,
        last_activity=state.last_activity,
        tool_calls=state.tool_calls,
        after_compaction=state.after_compaction,
        compactions=tuple(state.compactions),
        trend=tuple(state.samples),
        parent_session=state.parent_session,
    )


def by_urgency(readings: list[SessionReading]) -> list[SessionReading]:
    return sorted(readings, key=SessionReading.urgency)
