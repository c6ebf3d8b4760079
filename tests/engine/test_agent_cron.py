"""Cron times in local time, across a daylight-saving change (a real zone from
the system's tz database)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from server.engine.agents.cron import latest_due, next_after
from tests.conftest import require

ZONE = "America/New_York"  # DST ends 1 November 2026 at 02:00, starts 8 March 2026


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    require("the tz database (tzdata)", Path("/usr/share/zoneinfo", ZONE).is_file())
    monkeypatch.setenv("TZ", ZONE)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def local(*fields: int) -> float:
    return datetime(*fields).timestamp()  # type: ignore[arg-type]


def test_noon_stays_noon_across_the_autumn_change(new_york: None) -> None:
    midnight = local(2026, 11, 1, 0, 0)
    noon = next_after("0 12 * * *", midnight)
    assert datetime.fromtimestamp(noon) == datetime(2026, 11, 1, 12, 0)
    assert noon - midnight == 13 * 3600  # that day has 25 hours
    assert datetime.fromtimestamp(next_after("0 12 * * *", noon)) == datetime(2026, 11, 2, 12)


def test_noon_stays_noon_across_the_spring_change(new_york: None) -> None:
    midnight = local(2026, 3, 8, 0, 0)
    noon = next_after("0 12 * * *", midnight)
    assert noon - midnight == 11 * 3600  # that day has 23 hours
    assert latest_due("0 12 * * *", noon + 60) == noon


def test_the_repeated_hour_never_gives_a_time_already_passed(new_york: None) -> None:
    # 01:00-02:00 comes twice on 1 November. At the second 01:10, the 01:30 read
    # as the first one's is already past: the next is the day after.
    second = datetime(2026, 11, 1, 1, 10).timestamp() + 3600
    assert datetime.fromtimestamp(second).hour == 1
    after = next_after("30 1 * * *", second)
    assert after > second
    assert datetime.fromtimestamp(after).date() == datetime(2026, 11, 2).date()
