"""The alert model: /ws/monitor messages in, tray state and notices out."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.alerts import (
    ICON_CRITICAL,
    ICON_NORMAL,
    ICON_WARNING,
    AlertModel,
    describe,
    project_name,
)

A = "/c/projects/-home-ada-src-engine/a.jsonl"
B = "/c/projects/-home-ada-src-web/b.jsonl"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def reading(key: str = A, level: str = "warning", **kw: Any) -> dict[str, Any]:
    return {
        "key": key,
        "tool": "claude-code",
        "project": "/home/ada/src/engine",
        "model": "claude-sonnet-4-5",
        "context_tokens": 112_400,
        "window": 200_000,
        "percent": 56.2,
        "level": level,
        "warning_at": 100_000,
        "critical_at": 130_000,
        "tool_calls": 12,
        **kw,
    }


def snapshot(*levels: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "monitor_sessions",
        "sessions": [reading(key, level) for key, level in levels],
        "roots": [],
        "active_within_hours": 24.0,
        "settings_error": None,
    }


def crossing(
    key: str = A,
    level: str = "warning",
    previous: str = "ok",
    *,
    rising: bool = True,
    initial: bool = False,
) -> dict[str, Any]:
    return {
        "type": "monitor_level",
        "key": key,
        "level": level,
        "previous": previous,
        "rising": rising,
        "initial": initial,
        "reading": reading(key, level),
    }


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def model(clock: Clock) -> AlertModel:
    m = AlertModel(min_interval=300.0, clock=clock)
    m.connected()
    return m


# --- tray state -------------------------------------------------------------------


def test_before_connecting_the_tray_says_so() -> None:
    tray = AlertModel().tray
    assert (tray.level, tray.icon, tray.connected) == ("ok", ICON_NORMAL, False)
    assert "not connected" in tray.tooltip


def test_no_sessions(model: AlertModel) -> None:
    model.handle(snapshot())
    assert (model.tray.level, model.tray.icon, model.tray.sessions) == ("ok", ICON_NORMAL, 0)
    assert model.tray.tooltip == "Sparrow: no live agent sessions"


def test_the_worst_level_across_sessions_wins(model: AlertModel) -> None:
    model.handle(snapshot((A, "ok"), (B, "unknown")))
    assert (model.tray.level, model.tray.icon) == ("ok", ICON_NORMAL)
    assert model.tray.tooltip == "Sparrow: 2 sessions, context ok"
    model.handle(snapshot((A, "warning"), (B, "ok")))
    assert (model.tray.level, model.tray.icon) == ("warning", ICON_WARNING)
    assert model.tray.tooltip == "Sparrow: 2 sessions, 1 warning"
    model.handle(snapshot((A, "warning"), (B, "critical")))
    assert (model.tray.level, model.tray.icon) == ("critical", ICON_CRITICAL)
    assert (model.tray.warning, model.tray.critical) == (1, 1)
    assert model.tray.tooltip == "Sparrow: 2 sessions, 1 critical, 1 warning"


def test_only_unknown_sessions_show_as_ok(model: AlertModel) -> None:
    model.handle(snapshot((A, "unknown")))
    assert (model.tray.level, model.tray.tooltip) == ("ok", "Sparrow: 1 session, context ok")


def test_a_snapshot_replaces_the_previous_one(model: AlertModel) -> None:
    model.handle(snapshot((A, "critical"), (B, "ok")))
    model.handle(snapshot((B, "ok")))  # A went idle or was deleted
    assert (model.tray.level, model.tray.sessions) == ("ok", 1)


def test_a_disconnect_clears_the_levels_and_the_next_snapshot_restores(
    model: AlertModel,
) -> None:
    model.handle(snapshot((A, "critical")))
    model.disconnected()
    assert (model.tray.level, model.tray.connected, model.tray.sessions) == ("ok", False, 0)
    assert "not connected" in model.tray.tooltip
    model.connected()
    model.handle(snapshot((A, "critical")))
    assert (model.tray.level, model.tray.connected) == ("critical", True)


def test_crossings_do_not_change_the_tray_snapshots_do(model: AlertModel) -> None:
    model.handle(snapshot((A, "ok")))
    model.handle(crossing(A, "warning"))
    assert model.tray.level == "ok"


@pytest.mark.parametrize(
    "message",
    [
        {},
        {"type": "something_else"},
        {"type": "monitor_sessions", "sessions": None},
        {"type": "monitor_sessions", "sessions": [1, "x", {"no": "key"}]},
        {"type": "monitor_sessions", "sessions": [{"key": A, "level": "bogus"}]},
    ],
)
def test_odd_messages_are_harmless(model: AlertModel, message: dict[str, Any]) -> None:
    assert model.handle(message) == []
    assert model.tray.level == "ok"


# --- notices ----------------------------------------------------------------------


def test_a_rising_crossing_to_warning_makes_one_notice(model: AlertModel) -> None:
    (notice,) = model.handle(crossing(A, "warning"))
    assert (notice.key, notice.level, notice.urgent) == (A, "warning", False)
    assert notice.title == "Context warning: engine"
    assert notice.body == (
        "The claude-code session is at 112k of 200k tokens (56%). Critical at 130k."
    )


def test_critical_is_urgent_and_asks_for_a_handoff(model: AlertModel) -> None:
    (notice,) = model.handle(crossing(A, "critical", "warning"))
    assert (notice.level, notice.urgent) == ("critical", True)
    assert "handoff" in notice.body


def test_initial_crossings_at_startup_make_no_notice(model: AlertModel) -> None:
    assert model.handle(crossing(A, "critical", "unknown", initial=True)) == []
    assert model.handle(crossing(B, "warning", "unknown", initial=True)) == []


def test_crossings_sent_again_on_a_reconnect_make_no_second_notice(
    model: AlertModel, clock: Clock
) -> None:
    assert len(model.handle(crossing(A, "warning") | {"number": 1})) == 1
    assert len(model.handle(crossing(B, "critical") | {"number": 2})) == 1
    clock.now += 3600  # long past the interval: only the number tells them apart
    assert model.handle(crossing(A, "warning") | {"number": 1}) == []
    assert model.handle(crossing(B, "critical") | {"number": 2}) == []
    assert len(model.handle(crossing(A, "critical", "warning") | {"number": 3})) == 1


def test_falling_crossings_make_no_notice(model: AlertModel) -> None:
    assert model.handle(crossing(A, "warning", "critical", rising=False)) == []
    assert model.handle(crossing(A, "ok", "warning", rising=False)) == []


def test_rising_to_ok_makes_no_notice(model: AlertModel) -> None:
    assert model.handle(crossing(A, "ok", "unknown")) == []


def test_a_repeat_of_the_same_level_is_held_back_for_the_interval(
    model: AlertModel, clock: Clock
) -> None:
    assert len(model.handle(crossing(A, "warning"))) == 1
    model.handle(crossing(A, "ok", "warning", rising=False))
    clock.now += 299
    assert model.handle(crossing(A, "warning")) == []  # oscillating at the threshold
    clock.now += 2
    assert len(model.handle(crossing(A, "warning"))) == 1


def test_a_rise_above_the_level_last_notified_always_goes_through(
    model: AlertModel, clock: Clock
) -> None:
    assert len(model.handle(crossing(A, "warning"))) == 1
    clock.now += 5
    assert [n.level for n in model.handle(crossing(A, "critical", "warning"))] == ["critical"]
    clock.now += 5
    model.handle(crossing(A, "warning", "critical", rising=False))
    assert model.handle(crossing(A, "critical", "warning")) == []
    assert model.handle(crossing(A, "warning", "ok")) == []  # below what was notified


def test_the_limit_is_per_session(model: AlertModel) -> None:
    assert len(model.handle(crossing(A, "warning"))) == 1
    assert len(model.handle(crossing(B, "warning"))) == 1


def test_a_session_gone_idle_is_forgotten_after_its_quiet_time(
    model: AlertModel, clock: Clock
) -> None:
    model.handle(crossing(A, "warning"))
    model.handle(snapshot())  # A no longer listed, but its quiet time is not over
    assert model.handle(crossing(A, "warning")) == []
    clock.now += 301
    model.handle(snapshot())
    assert len(model.handle(crossing(A, "warning"))) == 1


@pytest.mark.parametrize(
    "message",
    [
        {"type": "monitor_level", "level": "warning", "rising": True},
        {"type": "monitor_level", "key": A, "level": "purple", "rising": True},
        {"type": "monitor_level", "key": A, "level": "warning"},  # rising missing
    ],
)
def test_malformed_crossings_make_no_notice(model: AlertModel, message: dict[str, Any]) -> None:
    assert model.handle(message) == []


def test_a_crossing_without_its_reading_still_makes_a_notice(model: AlertModel) -> None:
    message = crossing(A, "warning")
    del message["reading"]
    (notice,) = model.handle(message)
    assert notice.title == "Context warning: a session"
    assert notice.body == "The agent session is at context size unknown."


# --- texts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("project", "name"),
    [
        ("/home/ada/src/engine", "engine"),
        ("/home/ada/src/engine/", "engine"),
        ("C:\\Users\\ada\\web", "web"),
        ("-home-ada-src-engine", "-home-ada-src-engine"),
        ("", "a session"),
        (None, "a session"),
    ],
)
def test_project_names(project: object, name: str) -> None:
    assert project_name(project) == name


def test_figures_without_a_window_or_without_usage() -> None:
    assert describe("warning", reading(window=None, critical_at=None, percent=None))[1] == (
        "The claude-code session is at 112k tokens (window unknown)."
    )
    # An absolute threshold still applies without a window, and is said.
    assert describe("critical", reading(window=None, percent=None))[1] == (
        "The claude-code session is at 112k tokens (window unknown). "
        "Compaction is near: ask the agent for a handoff doc."
    )
    assert describe("warning", reading(context_tokens=None, tool="codex"))[1] == (
        "The codex session is at 12 tool calls (no token counts). Critical at 130k."
    )
