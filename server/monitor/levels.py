"""Levels: how close a session is to its context window, and when to look.

Thresholds are per tool. A threshold of 1 or less is a fraction of the model's
window (the defaults, 0.5 and 0.65: the reference's 100K and 130K of a 200K
window), so that a 1M-token window is not warned at 13%; a threshold above 1
is an absolute count of tokens. The window is the model's real one
(``windows``) or unknown: then there is no percentage and no level by ratio,
only by an absolute threshold if one is configured. When a transcript gives no
usage at all, the reference's fallback applies: ``fallback_tool_count`` tool
calls make a warning. ``check_frequency`` throttles the Claude Code hook: it
reads the transcript on the first PostToolUse and then on every Nth.

Plain classes, not dataclasses: the hook process imports this.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from server.core.config_keys import table_header, toml_name
from server.monitor.state import CLAUDE_CODE, CODEX, SessionState
from server.monitor.windows import Lookup, Memo, price_window, resolve_window

UNKNOWN = "unknown"
OK = "ok"
WARNING = "warning"
CRITICAL = "critical"
LEVELS = (UNKNOWN, OK, WARNING, CRITICAL)
RANK = {level: rank for rank, level in enumerate(LEVELS)}

# Where the level comes from.
FROM_USAGE = "usage"
FROM_COMPACTION = "compaction"  # compacted, no usage since: small, size not yet known
FROM_TOOL_CALLS = "tool_calls"  # no usage could be read: the fallback heuristic
FROM_NO_WINDOW = "no_window"  # the context is known; the thresholds are shares of no known window
FROM_NOTHING = "none"

DEFAULT_CHECK_FREQUENCY = 5
DEFAULT_FALLBACK_TOOL_COUNT = 500
# (warning, critical) per tool: the same 50% / 65% that the reference's 100K /
# 130K are of a 200K window, for every window.
DEFAULT_LIMITS: dict[str, tuple[float, float]] = {
    CLAUDE_CODE: (0.5, 0.65),
    CODEX: (0.5, 0.65),
}


class Limits:
    """A tool's warning and critical thresholds (tokens if > 1, else a fraction of the window)."""

    __slots__ = ("critical", "warning")

    def __init__(self, warning: float, critical: float) -> None:
        if warning <= 0 or critical <= 0:
            raise ValueError("thresholds must be positive")
        self.warning = float(warning)
        self.critical = float(critical)

    def at(self, window: int | None) -> tuple[int | None, int | None]:
        """(warning, critical) in tokens for a window of ``window`` tokens; None
        for a share of a window not known."""
        return threshold_tokens(self.warning, window), threshold_tokens(self.critical, window)


def threshold_tokens(value: float, window: int | None) -> int | None:
    if value > 1.0:
        return int(value)
    return None if window is None else math.ceil(value * window)


class MonitorConfig:
    """What the levels depend on; built from ``MonitorSettings`` or the defaults."""

    __slots__ = ("check_frequency", "fallback_tool_count", "limits", "lookup", "windows")

    def __init__(
        self,
        limits: Mapping[str, Limits] | None = None,
        check_frequency: int = DEFAULT_CHECK_FREQUENCY,
        fallback_tool_count: int = DEFAULT_FALLBACK_TOOL_COUNT,
        windows: Mapping[str, int] | None = None,
        lookup: Lookup | None = price_window,
    ) -> None:
        base = {tool: Limits(*pair) for tool, pair in DEFAULT_LIMITS.items()}
        self.limits: dict[str, Limits] = {**base, **(limits or {})}
        self.check_frequency = max(1, check_frequency)
        self.fallback_tool_count = fallback_tool_count  # 0 turns the fallback off
        self.windows: dict[str, int] = dict(windows or {})
        # The last resort for a model's window (the price data); asked once per model.
        self.lookup: Lookup | None = None if lookup is None else Memo(lookup)

    @classmethod
    def from_settings(cls, settings: Any, lookup: Lookup | None = price_window) -> MonitorConfig:
        """From a ``server.core.settings.MonitorSettings`` (typed loosely: not imported here)."""
        return cls(
            limits={
                CLAUDE_CODE: Limits(settings.claude_code.warning, settings.claude_code.critical),
                CODEX: Limits(settings.codex.warning, settings.codex.critical),
            },
            check_frequency=settings.check_frequency,
            fallback_tool_count=settings.fallback_tool_count,
            windows=_windows(settings.windows),
            lookup=lookup,
        )

    def window_of(self, state: SessionState) -> tuple[int | None, str | None]:
        """The session's window and where it comes from; (None, None): not known."""
        return resolve_window(
            state.tool,
            state.model,
            state.reported_window,
            state.context_tokens,
            self.windows,
            self.lookup,
        )

    def limits_for(self, tool: str) -> Limits:
        return self.limits.get(tool) or Limits(*DEFAULT_LIMITS[CLAUDE_CODE])


def _windows(table: Mapping[str, object]) -> dict[str, int]:
    windows = {}
    for name, size in table.items():
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            key = f"{table_header(('monitor', 'windows'))} {toml_name(str(name))}"
            raise ValueError(f"{key}: expected a number of tokens, got {size!r}")
        windows[str(name)] = size
    return windows


class Assessment:
    """A session's figures against its thresholds."""

    __slots__ = (
        "critical_at",
        "level",
        "percent",
        "source",
        "tokens",
        "warning_at",
        "window",
        "window_source",
    )

    def __init__(
        self,
        tokens: int | None,
        window: int | None,
        level: str,
        source: str,
        warning_at: int | None,
        critical_at: int | None,
        window_source: str | None = None,
    ) -> None:
        self.tokens = tokens
        self.window = window  # None: not known, and no percentage is made up
        self.window_source = window_source
        self.level = level
        self.source = source
        self.warning_at = warning_at  # None: a share of a window not known
        self.critical_at = critical_at
        self.percent = (
            None if tokens is None or window is None else round(100.0 * tokens / window, 1)
        )

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def assess(state: SessionState, config: MonitorConfig, tool_calls: int | None = None) -> Assessment:
    """The level of ``state`` under ``config``. ``tool_calls`` replaces the count
    read from the transcript for the fallback (the hook counts its own calls)."""
    tokens = state.context_tokens
    window, window_source = config.window_of(state)
    warning_at, critical_at = config.limits_for(state.tool).at(window)
    if tokens is not None:
        level, source = _level(tokens, warning_at, critical_at), FROM_USAGE
        if level == UNKNOWN:
            source = FROM_NO_WINDOW
    elif state.after_compaction:
        level, source = OK, FROM_COMPACTION
    else:
        calls = state.tool_calls if tool_calls is None else tool_calls
        fallback = config.fallback_tool_count
        if fallback > 0 and calls >= fallback:
            level, source = WARNING, FROM_TOOL_CALLS
        else:
            level, source = UNKNOWN, FROM_NOTHING
    return Assessment(tokens, window, level, source, warning_at, critical_at, window_source)


def _level(tokens: int, warning_at: int | None, critical_at: int | None) -> str:
    """The level by the thresholds that are known. Below the known ones, OK only
    when the warning threshold is one of them: else it cannot be said."""
    if critical_at is not None and tokens >= critical_at:
        return CRITICAL
    if warning_at is not None:
        return WARNING if tokens >= warning_at else OK
    return UNKNOWN


def should_check(count: int, frequency: int) -> bool:
    """``check_frequency``: the 1st call of a session is checked, then every Nth."""
    return frequency <= 1 or (count - 1) % frequency == 0
