"""``sparrow monitor``: the context of every live Claude Code and Codex session,
most urgent first; live until Ctrl-C, or ``--once``; ``--json`` for NDJSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import TextIO

from server.cli.context import fail
from server.core import formatting
from server.core.paths import resolve_paths
from server.core.settings import SettingsError, load_settings
from server.monitor.reading import SessionReading
from server.runtime.session_monitor import LevelCrossed, MonitorEvent, SessionMonitor

BAR = 12
SPARK = "▁▂▃▄▅▆▇█"
COLORS = {"critical": "\x1b[31m", "warning": "\x1b[33m", "ok": "\x1b[32m"}
RESET = "\x1b[0m"
CLEAR = "\x1b[H\x1b[2J"


def handle(args: argparse.Namespace) -> int:
    try:
        paths = resolve_paths()
        settings = load_settings(paths.config_file).monitor
        monitor = SessionMonitor(settings, state_dir=paths.state)
    except (SettingsError, ValueError) as exc:
        return fail(str(exc))
    interval = settings.poll_seconds if args.interval is None else max(0.1, args.interval)
    if args.once:
        monitor.poll(notify=False)
        readings = monitor.snapshot()
        if args.json:
            for reading in readings:
                print(json.dumps(reading.to_dict(), ensure_ascii=False))
        else:
            print(render(readings, monitor, time.time(), color=sys.stdout.isatty()))
        return 0
    try:
        if args.json:
            _stream(monitor, interval, sys.stdout)
        else:
            _live(monitor, interval, sys.stdout)
    except KeyboardInterrupt:
        return 0
    return 0


def _live(monitor: SessionMonitor, interval: float, out: TextIO) -> None:
    color = out.isatty()
    while True:
        monitor.poll(notify=False)
        text = render(monitor.snapshot(), monitor, time.time(), color=color)
        if color:
            out.write(f"{CLEAR}{text}\n\nrefreshing every {interval:g}s · Ctrl-C to stop\n")
        else:  # a pipe or a file: one table after the other
            out.write(text + "\n\n")
        out.flush()
        time.sleep(interval)


def _stream(monitor: SessionMonitor, interval: float, out: TextIO) -> None:
    """Every event as one JSON line: the sessions as found, then each change."""
    while True:
        for event in monitor.poll(notify=False):
            out.write(json.dumps(event_dict(event), ensure_ascii=False) + "\n")
        out.flush()
        time.sleep(interval)


def event_dict(event: MonitorEvent) -> dict[str, object]:
    if isinstance(event, LevelCrossed):
        return {
            "type": event.type,
            "previous": event.previous,
            "rising": event.rising,
            "initial": event.initial,
            "reading": event.reading.to_dict(),
        }
    if hasattr(event, "reading"):
        return {"type": event.type, "reading": event.reading.to_dict()}
    return {"type": event.type} | {
        k: getattr(event, k) for k in ("key", "tool", "session_id", "deleted")
    }


# --- the table --------------------------------------------------------------------


def render(readings: list[SessionReading], monitor: SessionMonitor, now: float, color: bool) -> str:
    if not readings:
        places = ", ".join(root.path for root in monitor.roots)
        hours = monitor.settings.active_within_hours
        return f"no live sessions (none written to in the last {hours:g}h) in {places}"
    header = (
        f"{'LEVEL':<9} {'TOOL':<11} {'PROJECT':<24} {'MODEL':<22} "
        f"{'CONTEXT':>22} {'':<{BAR}} {'TREND':<10} {'COMPACTED':<13} ACTIVE"
    )
    lines = [header]
    for r in readings:
        level = f"{r.level:<9}"
        if color and r.level in COLORS:
            level = COLORS[r.level] + level + RESET
        project, model = _cut(_home(r.project), 24), _cut(_model(r.model), 22)
        lines.append(
            f"{level} {r.tool:<11} {project:<24} {model:<22} {_context(r):>22} {_bar(r)} "
            f"{_spark(r):<10} {_compacted(r, now):<13} {formatting.age(r.last_activity, now)}"
        )
    return "\n".join(lines)


UNKNOWN_WINDOW = "window unknown"


def _context(r: SessionReading) -> str:
    window = UNKNOWN_WINDOW if r.window is None else formatting.tokens(r.window)
    if r.context_tokens is None:
        shown = "compacted" if r.after_compaction else "-"
        if r.level_source == "tool_calls":
            shown = f"{r.tool_calls} tool calls"
        return f"{shown} / {window}"
    used = formatting.tokens(r.context_tokens)
    if r.window is None:  # no percentage: it would need a denominator
        return f"{used} / {window}"
    return f"{used} / {window} {r.percent or 0:>3.0f}%"


def _bar(r: SessionReading) -> str:
    if r.window is None:
        return "·" * BAR  # nothing to fill: the context column says why
    filled = 0 if r.context_tokens is None else min(BAR, round(BAR * r.context_tokens / r.window))
    return "█" * filled + "░" * (BAR - filled)


def _spark(r: SessionReading) -> str:
    points = [tokens for _, tokens in r.trend][-10:]
    # Without a window, the line shows the shape of the trend against its own top.
    scale = r.window or max(points, default=0)
    if scale <= 0:
        return ""
    top = len(SPARK) - 1
    return "".join(SPARK[min(top, int(top * t / scale))] for t in points)


def _compacted(r: SessionReading, now: float) -> str:
    last = r.last_compaction
    if last is None:
        return "-"
    before = f" {formatting.tokens(last.pre_tokens)}" if last.pre_tokens else ""
    when = formatting.age(last.at, now) if last.at else ""
    return f"{len(r.compactions)}x{before} {when}".strip()


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home != "/" and path.startswith(home + os.sep) else path


def _model(name: str | None) -> str:
    """A model's name without its date: ``claude-sonnet-4-5-20250929`` -> ``claude-sonnet-4-5``."""
    if not name:
        return "-"
    stem, _, date = name.rpartition("-")
    return stem if stem and len(date) == 8 and date.isdigit() else name


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]
