"""Helpers the benches share: a real headless server process, and figures."""

from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

URL = re.compile(r"(http://127\.0\.0\.1:(\d+))/\?token=(\S+)")


@dataclass
class Served:
    process: subprocess.Popen[str]
    base: str
    port: int
    token: str
    home: Path


def sparrow_desktop() -> str:
    found = shutil.which("sparrow-desktop", path=str(Path(sys.executable).parent))
    if not found:
        raise SystemExit("sparrow-desktop is not installed in this environment: run `make bench`")
    return found


@contextmanager
def headless_server(
    env: dict[str, str] | None = None, prepare: Callable[[Path], None] | None = None
) -> Iterator[Served]:
    """``sparrow-desktop --headless`` in a fresh SPARROW_HOME, which ``prepare``
    (when given) fills before the server starts."""
    home = Path(tempfile.mkdtemp(prefix="sparrow-bench-"))
    if prepare is not None:
        prepare(home)
    full_env = {**os.environ, "SPARROW_HOME": str(home), **(env or {})}
    process = subprocess.Popen(
        [sparrow_desktop(), "--headless"], stdout=subprocess.PIPE, text=True, env=full_env
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = URL.search(line)
        if not match:
            raise RuntimeError(f"the server did not print its URL: {line!r}")
        yield Served(process, match.group(1), int(match.group(2)), match.group(3), home)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        shutil.rmtree(home, ignore_errors=True)


@contextmanager
def xvfb_display(program: str, screen: str = "1280x800x24") -> Iterator[str | None]:
    """A private Xvfb; its display name, or None if it did not start.
    ``-displayfd`` picks a free number and writes it once the server accepts clients."""
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [program, "-displayfd", str(write_end), "-screen", "0", screen, "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    try:
        with os.fdopen(read_end) as pipe:
            number = pipe.readline().strip()
        yield f":{number}" if number else None
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))
    return ordered[index]


def median(values: list[float]) -> float:
    return statistics.median(values)


def now() -> float:
    return time.time()


def row(name: str, value: str, goal: str, ratio: float | None) -> str:
    mark = "" if ratio is None else ("  ok" if ratio <= 1.0 else "  MISSED")
    shown = "" if ratio is None else f"{ratio:.2f}"
    return f"  {name:<44} {value:>14}   goal {goal:<14} ratio {shown:>6}{mark}"
