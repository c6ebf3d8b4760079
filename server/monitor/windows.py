"""A session's context window, and where it was learnt; or None, "window unknown".

In this order: what the transcript says (Codex's ``model_context_window``;
a model id ending in ``[1m]``, Claude Code's mark for the long context), then
``[monitor.windows]`` (by model-name prefix), then genai-prices' data for the
model. Nothing else: a wrong denominator draws a wrong level, so where none of
them knows, the window stays unknown and no percentage is made up.

The price data costs ~0.7 s and ~30 MB to load: it is loaded only on a lookup
(``price_window``), which the app makes from its monitor's worker thread; each
answer is kept in memory (``Memo``) and in ``<state>/monitor/windows.json``
(``kept``) for a week, which the app, ``sparrow monitor`` and the hook share:
after the first lookup of a model no process loads the price data for it.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from server.monitor.state import CLAUDE_CODE, CODEX

LONG_WINDOW = 1_000_000  # Claude's long-context window

# Where a window comes from (a reading's ``window_source``).
FROM_TRANSCRIPT = "transcript"
FROM_SETTINGS = "settings"
FROM_PRICE_DATA = "price data"
FROM_LONG_CONTEXT = "long context"  # more context than the model's usual window: its 1M variant

Lookup = Callable[[str, str], int | None]  # (tool, model) -> window

WINDOWS_FILE = os.path.join("monitor", "windows.json")  # under Sparrow's state folder
KEPT_SECONDS = 7 * 86400  # then looked up again: a newer price data may know better

# The vendor whose price data names each tool's models.
PRICE_IDS = {CLAUDE_CODE: "anthropic", CODEX: "openai"}
_LONG_MARK = re.compile(r"(?:\[1m\]|-1m)$", re.IGNORECASE)


def price_window(tool: str, model: str) -> int | None:
    """genai-prices' window for ``model``. Slow on the first call: keep it off an event loop."""
    try:
        from server.providers.pricing import context_window_of

        return context_window_of(model, PRICE_IDS.get(tool))
    except Exception:  # a broken or missing price data must not stop the monitor's polls
        import logging  # here: the hook imports this module and rarely gets here

        logging.getLogger(__name__).warning(
            "no context window from the price data for %s", model, exc_info=True
        )
        return None


def kept(lookup: Lookup, path: str, clock: Callable[[], float] = time.time) -> Lookup:
    """``lookup``, its answers (unknown ones too) kept in the JSON file at ``path``
    for ``KEPT_SECONDS``. Best effort: a file that cannot be read or written only
    means asking ``lookup`` again."""

    def ask(tool: str, model: str) -> int | None:
        key = f"{tool}:{model}"
        known = _read(path)
        entry = known.get(key)
        if isinstance(entry, dict) and 0 <= clock() - _number(entry.get("at")) < KEPT_SECONDS:
            window = entry.get("window")
            if window is None or (isinstance(window, int) and window > 0):
                return window
        window = lookup(tool, model)
        known[key] = {"window": window, "at": clock()}
        _write(path, known)
        return window

    return ask


def _read(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: str, data: dict[str, Any]) -> None:
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(temporary, path)  # whole, for a reader in another process
    except OSError:
        pass


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def state_lookup(state_dir: str | os.PathLike[str] | None) -> Lookup:
    """The price data's windows, kept under ``state_dir`` (Sparrow's state folder)."""
    if state_dir is None:
        return price_window
    return kept(price_window, os.path.join(os.fspath(state_dir), WINDOWS_FILE))


class Memo:
    """A lookup that asks once per (tool, model), unknown answers included."""

    __slots__ = ("_known", "_lock", "lookup")

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self._known: dict[tuple[str, str], int | None] = {}
        self._lock = threading.Lock()  # a poll and a snapshot may ask at once: load once

    def __call__(self, tool: str, model: str) -> int | None:
        key = (tool, model)
        if key in self._known:
            return self._known[key]
        with self._lock:
            if key not in self._known:
                self._known[key] = self.lookup(tool, model)
            return self._known[key]


def by_prefix(table: Mapping[str, int], model: str) -> int | None:
    """The value of the longest key ``model`` starts with, ignoring case."""
    name = model.lower()
    best = max((p for p in table if name.startswith(p.lower())), key=len, default=None)
    return table[best] if best is not None and table[best] > 0 else None


def resolve_window(
    tool: str,
    model: str | None,
    reported: int | None = None,
    tokens: int | None = None,
    overrides: Mapping[str, int] | None = None,
    lookup: Lookup | None = None,
) -> tuple[int | None, str | None]:
    """(window, where it comes from), or (None, None) when it cannot be known."""
    if reported:
        return reported, FROM_TRANSCRIPT
    if not model:
        return None, None
    if _LONG_MARK.search(model):
        return LONG_WINDOW, FROM_TRANSCRIPT
    window, source = by_prefix(overrides or {}, model), FROM_SETTINGS
    if window is None and lookup is not None:
        window, source = lookup(tool, model), FROM_PRICE_DATA
    if window is None:
        return None, None
    if tokens is not None and tokens > window:
        # The context never exceeds the window: this one is not the session's.
        # Claude runs a model past its usual window only in its 1M long context.
        if model.lower().startswith("claude") and tokens <= LONG_WINDOW:
            return LONG_WINDOW, FROM_LONG_CONTEXT
        return None, None
    return window, source
