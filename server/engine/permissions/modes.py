"""The permission mode and the autonomy dial, and how they relate.

In the modes ``supervised``, ``trusted`` and ``autonomous`` the dial's band is
the mode: moving the dial across a boundary changes the mode, choosing one of
them moves the dial into its band. ``read-only``, ``plan`` and
``emergency-stop`` override the dial, which keeps its value for later."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final


class Mode(StrEnum):
    READ_ONLY = "read-only"
    PLAN = "plan"
    SUPERVISED = "supervised"
    TRUSTED = "trusted"
    AUTONOMOUS = "autonomous"
    EMERGENCY_STOP = "emergency-stop"


class Band(StrEnum):
    """The autonomy levels of autonomy-and-safety.md, named as it names them."""

    SUPERVISED = "Supervised"
    TRUSTED = "Trusted"
    AUTONOMOUS = "Autonomous"


# (band, from, to) as the reference's table writes them; a level belongs to the
# band whose range holds it once rounded to the table's two decimals.
BANDS: Final = (
    (Band.SUPERVISED, 0.0, 0.33),
    (Band.TRUSTED, 0.34, 0.66),
    (Band.AUTONOMOUS, 0.67, 1.0),
)
# Where the dial goes when a band's mode is chosen from outside it.
BAND_DEFAULT_LEVEL: Final = {Band.SUPERVISED: 0.2, Band.TRUSTED: 0.5, Band.AUTONOMOUS: 0.85}
MODE_OF_BAND: Final = {
    Band.SUPERVISED: Mode.SUPERVISED,
    Band.TRUSTED: Mode.TRUSTED,
    Band.AUTONOMOUS: Mode.AUTONOMOUS,
}
BAND_OF_MODE: Final = {mode: band for band, mode in MODE_OF_BAND.items()}


class ContractError(ValueError):
    """A level or mode that does not exist; the message says what does."""


def check_level(level: object) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float) or math.isnan(level):
        raise ContractError(f"the autonomy level must be a number from 0.0 to 1.0, not {level!r}")
    if not 0.0 <= level <= 1.0:
        raise ContractError(f"the autonomy level must be from 0.0 to 1.0, not {level}")
    return float(level)


def parse_mode(text: str) -> Mode:
    normal = text.strip().lower().replace("_", "-").replace(" ", "-")
    try:
        return Mode(normal)
    except ValueError:
        known = ", ".join(m.value for m in Mode)
        raise ContractError(f"unknown permission mode {text!r}; the modes are {known}") from None


def band_of(level: float) -> Band:
    rounded = round(check_level(level), 2)
    for band, _low, high in BANDS:
        if rounded <= high:
            return band
    raise AssertionError("the last band ends at 1.0")


@dataclass(frozen=True)
class Contract:
    """How much a run may do alone: the permission mode and the dial."""

    mode: Mode = Mode.SUPERVISED
    level: float = BAND_DEFAULT_LEVEL[Band.SUPERVISED]

    def __post_init__(self) -> None:
        check_level(self.level)
        band_mode = BAND_OF_MODE.get(self.mode)
        if band_mode is not None and band_of(self.level) != band_mode:
            raise ContractError(
                f"mode {self.mode} needs a level in the {band_mode} band, not {self.level}"
            )

    @property
    def band(self) -> Band:
        return band_of(self.level)

    def to_dict(self) -> dict[str, Any]:
        """The Safety object of docs/api.md: the contract, and what it can be."""
        return {
            "mode": self.mode.value,
            "level": self.level,
            "band": self.band.value,
            "modes": [mode.value for mode in Mode],
            "bands": [{"name": band.value, "from": low, "to": high} for band, low, high in BANDS],
        }

    def changed(self, *, mode: str | None = None, level: object = None) -> Contract:
        """The level first, then the mode (so {"level": 0.9, "mode": "plan"} keeps
        both); ContractError for a level or mode that does not exist."""
        contract = self
        if level is not None:
            contract = contract.with_level(check_level(level))
        if mode is not None:
            contract = contract.with_mode(parse_mode(mode))
        return contract

    @classmethod
    def of(cls, mode: str, level: float) -> Contract:
        """From stored or configured values that may disagree: the mode wins."""
        parsed = parse_mode(mode)
        level = check_level(level)
        band = BAND_OF_MODE.get(parsed)
        if band is not None and band_of(level) != band:
            level = BAND_DEFAULT_LEVEL[band]
        return cls(parsed, level)

    def with_level(self, level: float) -> Contract:
        level = check_level(level)
        if self.mode in BAND_OF_MODE:
            return Contract(MODE_OF_BAND[band_of(level)], level)
        return Contract(self.mode, level)

    def with_mode(self, mode: Mode) -> Contract:
        band = BAND_OF_MODE.get(mode)
        if band is None or band_of(self.level) == band:
            return Contract(mode, self.level)
        return Contract(mode, BAND_DEFAULT_LEVEL[band])
