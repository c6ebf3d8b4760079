"""Levels: relative and absolute thresholds, the model's real window (or none),
the fallback, check_frequency, and the settings that configure them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from server.core.settings import MonitorSettings, SettingsError, load_settings
from server.monitor.levels import (
    CRITICAL,
    DEFAULT_CHECK_FREQUENCY,
    DEFAULT_FALLBACK_TOOL_COUNT,
    DEFAULT_LIMITS,
    OK,
    UNKNOWN,
    WARNING,
    Limits,
    MonitorConfig,
    assess,
    should_check,
)
from server.monitor.state import CLAUDE_CODE, CODEX, SessionState
from server.monitor.windows import KEPT_SECONDS, LONG_WINDOW, kept, price_window, resolve_window

# Models the price data (genai-prices) knows, with their windows there.
SMALL = "claude-opus-4-1-20250805"  # 200K
LARGE = "claude-opus-5-5"  # 1M
NOBODY_KNOWS = "acme-coder-7"


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
def test_on_a_200k_window_the_defaults_are_the_references_figures(tokens: int, level: str) -> None:
    found = assess(state(tokens=tokens, model=SMALL), MonitorConfig())
    assert found.level == level and found.source == "usage"
    assert (found.warning_at, found.critical_at, found.window) == (100_000, 130_000, 200_000)
    assert found.window_source == "price data"
    assert found.percent == round(100 * tokens / 200_000, 1)


def test_a_1m_window_model_is_drawn_against_1m() -> None:
    """The issue: 142K on a 1M-window model was drawn as 71% of 200K, critical."""
    found = assess(state(tokens=142_300, model=LARGE), MonitorConfig())
    assert (found.window, found.window_source) == (1_000_000, "price data")
    assert (found.percent, found.level) == (14.2, OK)
    assert (found.warning_at, found.critical_at) == (500_000, 650_000)


def test_the_long_context_mark_of_the_model_id_is_the_transcript_saying_so() -> None:
    found = assess(state(tokens=142_300, model="claude-sonnet-4-5[1m]"), MonitorConfig())
    assert (found.window, found.window_source, found.level) == (LONG_WINDOW, "transcript", OK)


def test_fractions_follow_the_models_window() -> None:
    config = MonitorConfig(limits={CLAUDE_CODE: Limits(0.6, 0.8)})
    small = assess(state(tokens=125_000, model="claude-sonnet-4-5"), config)
    assert (small.warning_at, small.critical_at, small.level) == (120_000, 160_000, WARNING)
    # A 1M window (configured for the model): 125K is 12.5%, nowhere near a level.
    config.windows["claude-sonnet-4-5"] = 1_000_000
    large = assess(state(tokens=125_000, model="claude-sonnet-4-5-20250929"), config)
    assert (large.window, large.window_source) == (1_000_000, "settings")
    assert (large.warning_at, large.level) == (600_000, OK)


def test_codex_thresholds_use_the_window_the_rollout_states() -> None:
    found = assess(
        state(CODEX, tokens=180_000, model="gpt-5-codex", window=258_400), MonitorConfig()
    )
    assert (found.window, found.window_source) == (258_400, "transcript")
    assert (found.warning_at, found.critical_at) == (129_200, 167_960)
    assert found.level == CRITICAL


def test_where_nothing_knows_the_window_it_is_unknown_not_guessed() -> None:
    found = assess(state(tokens=142_300, model=NOBODY_KNOWS), MonitorConfig())
    assert (found.window, found.window_source, found.percent) == (None, None, None)
    assert (found.warning_at, found.critical_at) == (None, None)
    # The default thresholds are shares of the window: no level by ratio.
    assert (found.level, found.source) == (UNKNOWN, "no_window")
    # Nor without a model name, or without the price data to ask.
    assert assess(state(tokens=5_000), MonitorConfig()).window is None
    assert assess(state(tokens=5_000, model=SMALL), MonitorConfig(lookup=None)).window is None


def test_absolute_thresholds_still_give_a_level_without_a_window() -> None:
    config = MonitorConfig(limits={CLAUDE_CODE: Limits(100_000, 130_000)})
    assert assess(state(tokens=50_000, model=NOBODY_KNOWS), config).level == OK
    assert assess(state(tokens=110_000, model=NOBODY_KNOWS), config).level == WARNING
    found = assess(state(tokens=140_000, model=NOBODY_KNOWS), config)
    assert (found.level, found.source, found.percent, found.window) == (
        CRITICAL,
        "usage",
        None,
        None,
    )
    # Only the critical one absolute: above it critical; below it, who can say.
    mixed = MonitorConfig(limits={CLAUDE_CODE: Limits(0.5, 130_000)})
    assert assess(state(tokens=140_000, model=NOBODY_KNOWS), mixed).level == CRITICAL
    assert assess(state(tokens=50_000, model=NOBODY_KNOWS), mixed).level == UNKNOWN


def test_the_order_transcript_then_settings_then_price_data() -> None:
    asked: list[tuple[str, str]] = []

    def lookup(tool: str, model: str) -> int | None:
        asked.append((tool, model))
        return 300_000

    settings = {"claude-x": 500_000}
    assert resolve_window(CODEX, "claude-x", 400_000, None, settings, lookup) == (
        400_000,
        "transcript",
    )
    assert resolve_window(CLAUDE_CODE, "Claude-X-2", None, None, settings, lookup) == (
        500_000,
        "settings",
    )
    assert asked == []
    assert resolve_window(CLAUDE_CODE, "other", None, None, settings, lookup) == (
        300_000,
        "price data",
    )
    assert asked == [(CLAUDE_CODE, "other")]


def test_the_price_data_is_asked_once_per_model() -> None:
    asked: list[str] = []

    def lookup(tool: str, model: str) -> int | None:
        asked.append(model)
        return None

    config = MonitorConfig(lookup=lookup)
    for _ in range(3):
        assess(state(tokens=1_000, model=NOBODY_KNOWS), config)
        assess(state(tokens=1_000, model="other"), config)
    assert asked == [NOBODY_KNOWS, "other"]


def test_windows_looked_up_are_kept_in_a_file_for_every_process(tmp_path: Path) -> None:
    asked: list[str] = []

    def lookup(tool: str, model: str) -> int | None:
        asked.append(model)
        return 1_000_000 if model == LARGE else None

    now = [1_000.0]
    path = tmp_path / "state" / "monitor" / "windows.json"
    first = kept(lookup, str(path), clock=lambda: now[0])
    assert (first(CLAUDE_CODE, LARGE), first(CLAUDE_CODE, NOBODY_KNOWS)) == (1_000_000, None)
    # Another process, later: it reads the file, unknown answers included.
    now[0] += KEPT_SECONDS - 1
    other = kept(lookup, str(path), clock=lambda: now[0])
    assert (other(CLAUDE_CODE, LARGE), other(CLAUDE_CODE, NOBODY_KNOWS)) == (1_000_000, None)
    assert asked == [LARGE, NOBODY_KNOWS]
    # A week on, asked again; a file that cannot be read is no answer.
    now[0] += 1
    assert other(CLAUDE_CODE, LARGE) == 1_000_000 and asked[-1] == LARGE
    path.write_text("not json")
    assert other(CLAUDE_CODE, NOBODY_KNOWS) is None and asked[-1] == NOBODY_KNOWS
    assert len(asked) == 4


def test_the_price_data_by_tool() -> None:
    assert price_window(CLAUDE_CODE, "claude-sonnet-4-5-20250929") == 200_000
    assert price_window(CODEX, "gpt-5") == 400_000
    assert price_window(CLAUDE_CODE, NOBODY_KNOWS) is None


def test_more_context_than_the_window_means_the_long_window() -> None:
    found = assess(state(tokens=250_000, model="claude-sonnet-4-5"), MonitorConfig())
    assert (found.window, found.window_source) == (LONG_WINDOW, "long context")
    # Past 1M, or a model with no long variant: the window is not the one known.
    beyond = assess(state(tokens=1_500_000, model="claude-sonnet-4-5"), MonitorConfig())
    assert beyond.window is None
    codex = assess(state(CODEX, tokens=500_000, model="gpt-5"), MonitorConfig())
    assert codex.window is None and codex.level == UNKNOWN


def test_importing_the_levels_leaves_the_price_data_alone() -> None:
    """The hook process imports the levels after every tool call."""
    code = "import sys, server.monitor.levels; print('genai_prices' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def test_the_fallback_counts_tool_calls_when_no_usage_is_readable() -> None:
    config = MonitorConfig(fallback_tool_count=500)
    assert assess(state(calls=499), config).level == UNKNOWN
    found = assess(state(calls=500), config)
    assert found.window is None
    assert (found.level, found.source, found.tokens, found.percent) == (
        WARNING,
        "tool_calls",
        None,
        None,
    )
    assert assess(state(calls=10), config, tool_calls=600).level == WARNING
    assert assess(state(calls=10_000), MonitorConfig(fallback_tool_count=0)).level == UNKNOWN
    # Usage wins over the count: it is the real figure.
    assert assess(state(tokens=5_000, calls=10_000, model=SMALL), config).level == OK


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
    assert found.window_source == "settings"
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
