"""Levels: how close a session is to its context window, and when to look.

Thresholds are per tool. A threshold above 1 is an absolute count of tokens
(the reference's defaults: warning 100K, critical 130K); a threshold of 1 or
less is a fraction of the model's window (0.5 = half the window), so that a
1M-token window is not warned at 10%. When a transcript gives no usage at all,
the reference's fallback applies: ``fallback_tool_count`` tool calls make a
warning. ``check_frequency`` throttles the Claude Code hook: it reads the
transcript on the first PostToolUse and then on every Nth.

Plain classes, not dataclasses: the hook process imports this.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from server.core.config_keys import table_header, toml_name
from server.monitor.state import CLAUDE_CODE, CODEX, SessionState

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
FROM_NOTHING = "none"

DEFAULT_CHECK_FREQUENCY = 5
DEFAULT_FALLBACK_TOOL_COUNT = 500
# (warning, critical) per tool. Claude Code: the reference's absolute figures.
# Codex states its window in the rollout, so a fraction of it: the same 50% / 65%
# that 100K / 130K are of a 200K window.
DEFAULT_LIMITS: dict[str, tuple[float, float]] = {
    CLAUDE_CODE: (100_000.0, 130_000.0),
    CODEX: (0.5, 0.65),
}

DEFAULT_WINDOW = 200_000
LONG_WINDOW = 1_000_000  # Claude's long-context window
# Model name prefixes and their context windows (the longest matching prefix wins).
KNOWN_WINDOWS: dict[str, int] = {
    "claude-": 200_000,
    "gpt-5": 272_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "codex-mini": 200_000,
}


class Limits:
    """A tool's warning and critical thresholds (tokens if > 1, else a fraction of the window)."""

    __slots__ = ("critical", "warning")

    def __init__(self, warning: float, critical: float) -> None:
        if warning <= 0 or critical <= 0:
            raise ValueError("thresholds must be positive")
        self.warning = float(warning)
        self.critical = float(critical)

    def at(self, window: int) -> tuple[int, int]:
        """(warning, critical) in tokens for a window of ``window`` tokens."""
        return threshold_tokens(self.warning, window), threshold_tokens(self.critical, window)


def threshold_tokens(value: float, window: int) -> int:
    return math.ceil(value * window) if value <= 1.0 else int(value)


class MonitorConfig:
    """What the levels depend on; built from ``MonitorSettings`` or the defaults."""

    __slots__ = ("check_frequency", "fallback_tool_count", "limits", "windows")

    def __init__(
        self,
        limits: Mapping[str, Limits] | None = None,
        check_frequency: int = DEFAULT_CHECK_FREQUENCY,
        fallback_tool_count: int = DEFAULT_FALLBACK_TOOL_COUNT,
        windows: Mapping[str, int] | None = None,
    ) -> None:
        base = {tool: Limits(*pair) for tool, pair in DEFAULT_LIMITS.items()}
        self.limits: dict[str, Limits] = {**base, **(limits or {})}
        self.check_frequency = max(1, check_frequency)
        self.fallback_tool_count = fallback_tool_count  # 0 turns the fallback off
        self.windows: dict[str, int] = dict(windows or {})

    @classmethod
    def from_settings(cls, settings: Any) -> MonitorConfig:
        """From a ``server.core.settings.MonitorSettings`` (typed loosely: not imported here)."""
        return cls(
            limits={
                CLAUDE_CODE: Limits(settings.claude_code.warning, settings.claude_code.critical),
                CODEX: Limits(settings.codex.warning, settings.codex.critical),
            },
            check_frequency=settings.check_frequency,
            fallback_tool_count=settings.fallback_tool_count,
            windows=_windows(settings.windows),
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


def context_window(
    model: str | None,
    reported: int | None = None,
    tokens: int | None = None,
    overrides: Mapping[str, int] | None = None,
) -> int:
    """The model's context window: as the transcript states it, else as configured
    or known for the model, else 200K; never less than the context seen in it."""
    window = reported or _window_of(model, overrides)
    if tokens is not None and tokens > window:
        # More context than the window: it is the long-context variant.
        window = LONG_WINDOW if tokens <= LONG_WINDOW else tokens
    return window


def _window_of(model: str | None, overrides: Mapping[str, int] | None) -> int:
    if not model:
        return DEFAULT_WINDOW
    name = model.lower()
    for table in (overrides or {}, KNOWN_WINDOWS):
        best = max((p for p in table if name.startswith(p.lower())), key=len, default=None)
        if best is not None and table[best] > 0:
            return table[best]
    if name.endswith("[1m]") or "-1m" in name:
        return LONG_WINDOW
    return DEFAULT_WINDOW


class Assessment:
    """A session's figures against its thresholds."""

    __slots__ = ("critical_at", "level", "percent", "source", "tokens", "warning_at", "window")

    def __init__(
        self,
        tokens: int | None,
        window: int,
        level: str,
        source: str,
        warning_at: int,
        critical_at: int,
    ) -> None:
        self.tokens = tokens
        self.window = window
        self.level = level
        self.source = source
        self.warning_at = warning_at
        self.critical_at = critical_at
        self.percent = None if tokens is None else round(100.0 * tokens / window, 1)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def assess(state: SessionState, config: MonitorConfig, tool_calls: int | None = None) -> Assessment:
    """The level of ``state`` under ``config``. ``tool_calls`` replaces the count
    read from the transcript for the fallback (the hook counts its own calls)."""
    tokens = state.context_tokens
    window = context_window(state.model, state.reported_window, tokens, config.windows)
    warning_at, critical_at = config.limits_for(state.tool).at(window)
    if tokens is not None:
        level = CRITICAL if tokens >= critical_at else WARNING if tokens >= warning_at else OK
        source = FROM_USAGE
    elif state.after_compaction:
        level, source = OK, FROM_COMPACTION
    else:
        calls = state.tool_calls if tool_calls is None else tool_calls
        fallback = config.fallback_tool_count
        if fallback > 0 and calls >= fallback:
            level, source = WARNING, FROM_TOOL_CALLS
        else:
            level, source = UNKNOWN, FROM_NOTHING
    return Assessment(tokens, window, level, source, warning_at, critical_at)


def should_check(count: int, frequency: int) -> bool:
    """``check_frequency``: the 1st call of a session is checked, then every Nth."""
    return frequency <= 1 or (count - 1) % frequency == 0
