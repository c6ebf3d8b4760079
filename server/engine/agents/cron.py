"""Cron expressions, read by cronsim: five fields in local time, or one of the
usual @ names. Times are seconds since the epoch, as everywhere in the store.

cronsim walks naive local wall-clock times; ``datetime.timestamp`` then reads
each with the local zone's rules for that day. An aware start made by
``astimezone()`` would carry today's fixed offset into every later day, an
hour off across a daylight-saving change."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from cronsim import CronSim

# cronsim reads five fields only; these are the names cron itself knows.
ALIASES: Final = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}


class CronError(ValueError):
    """Not a cron expression; the message says what is wrong."""


def _fields(expression: str) -> str:
    return ALIASES.get(expression.strip().lower(), expression.strip())


def _cron(expression: str, start: datetime, reverse: bool = False) -> CronSim:
    # Imported here: an app without scheduled agents never loads it.
    from cronsim import CronSim

    return CronSim(_fields(expression), start, reverse=reverse)


def check_cron(expression: str) -> str:
    """``expression`` as given, when it is one that fires at least once."""
    from cronsim import CronSimError

    try:
        next(_cron(expression, datetime.now()))
    except CronSimError as exc:
        raise CronError(f"{expression!r} is not a cron expression: {exc}") from exc
    except StopIteration as exc:  # e.g. 30 February: valid fields, never due
        raise CronError(f"{expression!r} is never due") from exc
    return expression.strip()


def next_after(expression: str, when: float) -> float:
    """The first time ``expression`` is due strictly after ``when``."""
    for moment in _cron(expression, datetime.fromtimestamp(when)):
        # The hour a clock goes back repeats wall times already passed.
        if moment.timestamp() > when:
            return moment.timestamp()
    raise CronError(f"{expression!r} is never due")  # pragma: no cover - check_cron refuses it


def latest_due(expression: str, when: float) -> float:
    """The last time ``expression`` was due at or before ``when``."""
    start = datetime.fromtimestamp(when) + timedelta(microseconds=1)
    for moment in _cron(expression, start, reverse=True):
        if moment.timestamp() <= when:
            return moment.timestamp()
    raise CronError(f"{expression!r} was never due")  # pragma: no cover - check_cron refuses it
