"""The window's size and position, remembered across launches.

Kept in the state folder as ``window.json``. What is restored is clamped to
the screens there are now: a window saved on a monitor since unplugged, or
larger than the screen, comes back whole on a visible one.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

FILE_NAME = "window.json"
DEFAULT_SIZE = (1200, 760)
MIN_SIZE = (760, 520)
# At least this much of the title bar's width and height must be on a screen.
VISIBLE_MARGIN = (120, 40)


@dataclass(frozen=True)
class Rect:
    x: int
    y: int
    width: int
    height: int

    def overlap(self, other: Rect) -> tuple[int, int]:
        width = min(self.x + self.width, other.x + other.width) - max(self.x, other.x)
        height = min(self.y + self.height, other.y + other.height) - max(self.y, other.y)
        return max(0, width), max(0, height)


@dataclass(frozen=True)
class Geometry:
    """Where the window was: its frame's top-left corner, its client size."""

    x: int | None
    y: int | None
    width: int
    height: int
    maximized: bool = False

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def load(state: Path) -> Geometry | None:
    """The saved geometry, or None (none saved, or unreadable: the default then)."""
    try:
        data = json.loads((state / FILE_NAME).read_text(encoding="utf-8"))
        x, y = data.get("x"), data.get("y")
        geometry = Geometry(
            x=None if x is None else int(x),
            y=None if y is None else int(y),
            width=int(data["width"]),
            height=int(data["height"]),
            maximized=bool(data.get("maximized", False)),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return geometry


def save(state: Path, geometry: Geometry) -> None:
    """Write atomically: a crash mid-write leaves the previous geometry."""
    state.mkdir(parents=True, exist_ok=True)
    temporary = state / f".{FILE_NAME}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(geometry.to_dict()), encoding="utf-8")
    os.replace(temporary, state / FILE_NAME)


def fit(saved: Geometry | None, screens: list[Rect]) -> Geometry:
    """What to open with: ``saved`` made to fit ``screens`` (the first is the
    primary), or the default size, centred (x and y None), when nothing is saved."""
    primary = screens[0] if screens else None
    if saved is None:
        width, height = DEFAULT_SIZE
        if primary is not None:
            # A small screen: most of it, never more.
            width = min(width, max(MIN_SIZE[0], primary.width * 9 // 10))
            height = min(height, max(MIN_SIZE[1], primary.height * 9 // 10))
        return Geometry(None, None, width, height)
    width = max(MIN_SIZE[0], saved.width)
    height = max(MIN_SIZE[1], saved.height)
    if saved.x is None or saved.y is None or primary is None:
        return Geometry(saved.x, saved.y, width, height, saved.maximized)
    rect = Rect(saved.x, saved.y, width, height)
    home = max(screens, key=lambda screen: _area(rect.overlap(screen)))
    seen = rect.overlap(home)
    if seen[0] < min(VISIBLE_MARGIN[0], width) or seen[1] < min(VISIBLE_MARGIN[1], height):
        home = primary  # off every screen now: bring it to the primary one
    width, height = min(width, home.width), min(height, home.height)
    x = min(max(saved.x, home.x), home.x + home.width - width)
    y = min(max(saved.y, home.y), home.y + home.height - height)
    return Geometry(x, y, width, height, saved.maximized)


def _area(size: tuple[int, int]) -> int:
    return size[0] * size[1]
