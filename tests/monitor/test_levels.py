"""Levels: absolute and relative thresholds, model windows, the fallback,
check_frequency, and the settings that configure them."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.core.settings import MonitorSettings, SettingsError, load_settings
from server.monitor.levels import (
    CRITICAL,
    DEFAULT_CHECK_FREQUENCY,
    DEFAULT_FALLBACK_TOOL_COUNT,
    DEFAULT_LIMITS,
    DEFAULT_WINDOW,
    LONG_WINDOW,
    OK,
    UNKNOWN,
    WARNING,
    Limits,
    MonitorConfig,
    assess,
    context_window,
    should_check,
)
from server.monitor.state import CLAUDE_CODE, CODEX, SessionState


def state(
    tool: str = CLAUDE_CODE,
    tokens: int | None = None,
    model: str | None = None,
    window: int | None = None,
    calls: int = 0,
) -> SessionState:
    s = SessionState(tool, "/x.jsonl")
    s.context_tokens, s.model, s.reported_window, s.tool_calls = tokens, model, window, calls
    return s


@pytest.mark.parametrize(
    ("tokens", "level"),
    [
        (0 + 1, OK),
        (99_999, OK),
        (100_000, WARNING),
        (129_999, WARNING),
        (130_000, CRITICAL),
        (199_000, CRITICAL),
    ],
)
def test_claude_codes_default_thresholds_are_the_references(tokens: int, level: str) -> None:
    found = assess(state(tokens=tokens, model="claude-opus-4-1-20250805"), MonitorConfig())
    assert found.level == level and found.source == "usage"
    assert (found.warning_at, found.critical_at, found.window) == (100_000, 130_000, 200_000)
    assert found.percent == round(100 * tokens / 200_000, 1)


def test_fractions_follow_the_models_window() -> None:
    config = MonitorConfig(limits={CLAUDE_CODE: Limits(0.6, 0.8)})
    small = assess(state(tokens=125_000, model="claude-sonnet-4-5"), config)
    assert (small.warning_at, small.critical_at, small.level) == (120_000, 160_000, WARNING)
    # A 1M window (configured for the model): 125K is 12.5%, nowhere near a level.
    config.windows["claude-sonnet-4-5"] = 1_000_000
    large = assess(state(tokens=125_000, model="claude-sonnet-4-5-20250929"), config)
    assert (large.window, large.warning_at, large.level) == (1_000_000, 600_000, OK)


def test_codex_thresholds_use_the_window_the_rollout_states() -> None:
    found = assess(
        state(CODEX, tokens=180_000, model="gpt-5-codex", window=258_400), MonitorConfig()
    )
    assert found.window == 258_400
    assert (found.warning_at, found.critical_at) == (129_200, 167_960)
    assert found.level == CRITICAL


def test_known_windows_and_the_default() -> None:
    assert context_window("claude-3-5-haiku-20241022") == 200_000
    assert context_window("gpt-5-codex") == 272_000
    assert context_window("gpt-4.1-mini") == 1_047_576
    assert context_window("some-new-model") == DEFAULT_WINDOW
    assert context_window(None) == DEFAULT_WINDOW
    assert context_window("claude-sonnet-4-5[1m]", overrides={}) == 200_000  # prefix wins...
    assert context_window("sonnet[1m]") == LONG_WINDOW  # ...else the [1m] mark
    assert context_window("Claude-X", overrides={"claude-x": 500_000}) == 500_000
    assert context_window("gpt-5", reported=400_000) == 400_000


def test_more_context_than_the_window_means_the_long_window() -> None:
    assert context_window("claude-sonnet-4-5", tokens=250_000) == LONG_WINDOW
    assert context_window("claude-sonnet-4-5", tokens=1_500_000) == 1_500_000


def test_the_fallback_counts_tool_calls_when_no_usage_is_readable() -> None:
    config = MonitorConfig(fallback_tool_count=500)
    assert assess(state(calls=499), config).level == UNKNOWN
    found = assess(state(calls=500), config)
    assert (found.level, found.source, found.tokens, found.percent) == (
        WARNING,
        "tool_calls",
        None,
        None,
    )
    assert assess(state(calls=10), config, tool_calls=600).level == WARNING
    assert assess(state(calls=10_000), MonitorConfig(fallback_tool_count=0)).level == UNKNOWN
    # Usage wins over the count: it is the real figure.
    assert assess(state(tokens=5_000, calls=10_000), config).level == OK


def test_after_a_compaction_without_new_usage_the_level_is_ok() -> None:
    s = state(tokens=150_000, calls=10_000)
    s.saw_compaction(at=None)
    found = assess(s, MonitorConfig())
    assert (found.level, found.source, found.tokens) == (OK, "compaction", None)
    assert s.compactions[0].pre_tokens == 150_000


def test_check_frequency_checks_the_first_call_then_every_nth() -> None:
    assert [n for n in range(1, 17) if should_check(n, 5)] == [1, 6, 11, 16]
    assert all(should_check(n, 1) for n in range(1, 5))
    assert all(should_check(n, 0) for n in range(1, 5))


def test_thresholds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        Limits(0, 1)


def test_the_settings_defaults_are_the_levels_defaults() -> None:
    config = MonitorConfig.from_settings(MonitorSettings())
    assert config.check_frequency == DEFAULT_CHECK_FREQUENCY
    assert config.fallback_tool_count == DEFAULT_FALLBACK_TOOL_COUNT
    for tool, (warning, critical) in DEFAULT_LIMITS.items():
        assert (config.limits[tool].warning, config.limits[tool].critical) == (warning, critical)
    defaults = MonitorConfig()
    assert {t: (lim.warning, lim.critical) for t, lim in defaults.limits.items()} == DEFAULT_LIMITS


def test_thresholds_are_configured_per_tool_in_config_toml(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[monitor]\ncheck_frequency = 3\n"
        "[monitor.claude_code]\nwarning = 0.6\ncritical = 0.8\n"
        "[monitor.codex]\nwarning = 90000\ncritical = 120000\n"
        '[monitor.windows]\n"claude-opus-4-6" = 1000000\n'
    )
    monitor = load_settings(path).monitor
    assert monitor.codex.warning == 90_000.0 and isinstance(monitor.codex.warning, float)
    config = MonitorConfig.from_settings(monitor)
    assert config.check_frequency == 3
    found = assess(state(tokens=650_000, model="claude-opus-4-6"), config)
    assert (found.window, found.level) == (1_000_000, WARNING)
    assert assess(state(CODEX, tokens=100_000, window=272_000), config).level == WARNING


def test_a_bad_threshold_names_its_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[monitor.codex]\nwarning = "high"\n')
    with pytest.raises(SettingsError, match=r"toml: \[monitor\.codex\] warning: expected float"):
        load_settings(path)


def test_a_bad_window_names_its_model(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[monitor.windows]\n"claude-x" = "big"\n')
    with pytest.raises(ValueError, match=r"^\[monitor\.windows\] claude-x: expected a number"):
        MonitorConfig.from_settings(load_settings(path).monitor)
