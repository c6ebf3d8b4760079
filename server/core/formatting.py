"""One way to say a figure, for every surface: token counts, sizes and ages.

ui/js/format.js says them the same way (a test holds the two together), so
the CLI and the window never round the same figure differently."""

from __future__ import annotations

import time


def tokens(n: int) -> str:
    """12,345 -> "12.3k"; 141,600 -> "142k"; 1,000,000 -> "1M"."""
    if n < 1000:
        return str(n)
    if n < 100_000:
        return f"{_round_half_up(n / 100) / 10:.1f}k"
    if n < 999_500:
        return f"{_round_half_up(n / 1000)}k"
    text = f"{_round_half_up(n / 10_000) / 100:.2f}".rstrip("0").rstrip(".")
    return f"{text}M"


def size(n: int) -> str:
    """Bytes: "512 B", "1.5 KB", "3.2 MB", "1.1 GB" (powers of 1024)."""
    if n < 1024:
        return f"{n} B"
    for unit, scale in (("KB", 1024), ("MB", 1024**2)):
        if n < scale * 1024:
            return f"{_round_half_up(n * 10 / scale) / 10:.1f} {unit}"
    return f"{_round_half_up(n * 10 / 1024**3) / 10:.1f} GB"


def age(when: float, now: float | None = None) -> str:
    """How long ago: "just now", "5 min ago", "3 h ago", "2 d ago", then the date."""
    now = time.time() if now is None else now
    delta = max(0.0, now - when)
    if delta < 45:
        return "just now"
    if delta < 3600:
        return f"{max(1, int(delta // 60))} min ago"
    if delta < 86400:
        return f"{int(delta // 3600)} h ago"
    if delta < 7 * 86400:
        return f"{int(delta // 86400)} d ago"
    return time.strftime("%Y-%m-%d", time.localtime(when))


def _round_half_up(value: float) -> int:
    """As JavaScript's Math.round (Python's round() goes to even)."""
    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)
