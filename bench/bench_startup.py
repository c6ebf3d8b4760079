"""Startup benchmark: how long until Sparrow shows its UI, and how much memory it takes.

(a) The window: seconds from launch to the page's first load (the
    ``Sparrow window ready`` line, which the page sends through the JS bridge)
    and the PSS of the whole process tree once loaded (QtWebEngine's helper
    processes included), against the floor in ``floor_window.py``: a bare
    pywebview window on the same backend and environment loading a one-line
    page from a bare Starlette app. Goals: time <= 1.2x floor, PSS <= 1.1x floor.
(b) ``--headless``: seconds from launch to the first authenticated ``GET /``
    answering 200, and the RSS then. Goals: < 1 s, < 120 MB.

Runs each several times (sparrow and floor alternating) and prints medians and
ratios. It reports; it asserts nothing, and exits 0.

    python -m bench.bench_startup [--runs N] [--settle SECONDS] [--no-window]
"""

from __future__ import annotations

import argparse
import http.client
import os
import queue
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.common import xvfb_display

HERE = Path(__file__).resolve().parent
SPARROW_READY = "Sparrow window ready"
FLOOR_READY = "floor window ready"
SERVING = re.compile(r"Sparrow is serving at (http://127\.0\.0\.1:(\d+))/\?token=([\w-]+)")
TIMEOUT = 120.0
MB = 1024 * 1024

WINDOW_TIME_GOAL = 1.2  # x floor
WINDOW_PSS_GOAL = 1.1  # x floor
HEADLESS_TIME_GOAL = 1.0  # s
HEADLESS_RSS_GOAL = 120.0  # MB


@dataclass
class Sample:
    seconds: float
    memory_mb: float


# --- processes ------------------------------------------------------------------


def sparrow_command(*args: str) -> list[str]:
    script = Path(sys.executable).with_name("sparrow-desktop")
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-m", "desktop.main", *args]


def compile_tree(tree: Path) -> None:
    """Compile a tree's sources as an install would: a launch that compiles them
    (PYTHONDONTWRITEBYTECODE, or the first start of a checkout) pays a cost once
    that an installed app never pays, and would not measure start-up."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "server", "desktop"],
        cwd=tree,
        check=True,
        capture_output=True,
    )


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def process_tree(pid: int) -> list[int]:
    tree = _children()
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(tree.get(current, []))
    return found


def _kb(path: Path, field: str) -> int:
    try:
        for line in path.read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def pss_mb(pid: int) -> float:
    """Proportional set size of ``pid`` and all its descendants."""
    kb = sum(_kb(Path(f"/proc/{p}/smaps_rollup"), "Pss:") for p in process_tree(pid))
    return kb / 1024


def rss_mb(pid: int) -> float:
    return _kb(Path(f"/proc/{pid}/status"), "VmRSS:") / 1024


class Launched:
    """A child process whose stdout lines arrive on a queue."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_line(self, match: Callable[[str], bool]) -> tuple[str, float]:
        """The first matching line and the seconds since launch when it came."""
        deadline = self.started + TIMEOUT
        while (left := deadline - time.perf_counter()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                raise RuntimeError(f"exited with {self.process.wait()} before it was ready")
            if match(line):
                return line, time.perf_counter() - self.started
        raise RuntimeError(f"not ready within {TIMEOUT:g} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)
        if self.process.stdout is not None:
            self.process.stdout.close()


# --- (a) the window -------------------------------------------------------------


@contextmanager
def x_display() -> Iterator[str | None]:
    """A private Xvfb (1280x800x24) if there is one, else the current DISPLAY."""
    from shutil import which

    program = which("Xvfb")
    if program is None:
        yield os.environ.get("DISPLAY")
        return
    with xvfb_display(program) as display:
        yield display


def window_env(display: str, home: Path) -> dict[str, str]:
    sys.path.insert(0, str(HERE.parent))
    from desktop.qt_env import configure_backend

    env = dict(os.environ)
    env.pop("SPARROW_SCREENSHOT", None)
    env.pop("WAYLAND_DISPLAY", None)
    env["DISPLAY"] = display
    env["SPARROW_HOME"] = str(home)
    configure_backend(env)  # the same backend settings for Sparrow and the floor
    return env


def measure_window(command: list[str], ready: str, env: dict[str, str], settle: float) -> Sample:
    launched = Launched(command, env)
    try:
        _, seconds = launched.wait_line(lambda line: line == ready)
        time.sleep(settle)
        return Sample(seconds, pss_mb(launched.process.pid))
    finally:
        launched.stop()


# --- (b) headless ---------------------------------------------------------------


def measure_headless(env: dict[str, str], command: list[str] | None = None) -> Sample:
    launched = Launched(command or sparrow_command("--headless"), env)
    try:
        line, _ = launched.wait_line(lambda text: SERVING.match(text) is not None)
        found = SERVING.match(line)
        assert found is not None
        port, token = int(found.group(2)), found.group(3)
        while True:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                conn.request("GET", "/", headers={"Authorization": f"Bearer {token}"})
                answer = conn.getresponse()
                answer.read()
            finally:
                conn.close()
            if answer.status == 200:
                seconds = time.perf_counter() - launched.started
                break
            if time.perf_counter() - launched.started > TIMEOUT:
                raise RuntimeError(f"GET / answered {answer.status}")
            time.sleep(0.01)
        return Sample(seconds, rss_mb(launched.process.pid))
    finally:
        launched.stop()


# --- report ---------------------------------------------------------------------


def median(samples: list[Sample], attribute: str) -> float:
    return float(statistics.median(float(getattr(sample, attribute)) for sample in samples))


def row(label: str, ours: float, floor: float | None, goal: str, to_goal: float) -> None:
    base = f"{floor:>10.2f}{ours / floor:>8.2f}" if floor is not None else f"{'-':>10}{'-':>8}"
    result = "ok" if to_goal <= 1.0 else "MISSED"
    print(f"{label:<36}{ours:>10.2f}{base}  {goal:<16}{to_goal:>8.2f}  {result}")


def report(
    runs: int,
    headless: list[Sample],
    sparrow: list[Sample],
    floor: list[Sample],
    note: str,
) -> None:
    print(f"Sparrow startup, median of {runs} runs")
    print(
        f"{'measure':<36}{'sparrow':>10}{'floor':>10}{'ratio':>8}  {'goal':<16}"
        f"{'to goal':>8}  result"
    )
    if sparrow and floor:
        for label, attribute, goal in (
            ("window: launch to page loaded (s)", "seconds", WINDOW_TIME_GOAL),
            ("window: PSS, process tree (MB)", "memory_mb", WINDOW_PSS_GOAL),
        ):
            ours, base = median(sparrow, attribute), median(floor, attribute)
            row(label, ours, base, f"<= {goal:g}x floor", ours / base / goal)
    else:
        print(f"window: not measured ({note})")
    if headless:
        seconds, memory = median(headless, "seconds"), median(headless, "memory_mb")
        row(
            "headless: launch to GET / 200 (s)",
            seconds,
            None,
            f"< {HEADLESS_TIME_GOAL:g} s",
            seconds / HEADLESS_TIME_GOAL,
        )
        row(
            "headless: RSS (MB)",
            memory,
            None,
            f"< {HEADLESS_RSS_GOAL:g} MB",
            memory / HEADLESS_RSS_GOAL,
        )
    print("each run (seconds / MB):")
    for name, samples in (
        ("sparrow window", sparrow),
        ("floor window", floor),
        ("headless", headless),
    ):
        if samples:
            figures = ", ".join(f"{s.seconds:.2f}/{s.memory_mb:.0f}" for s in samples)
            print(f"  {name:<15} {figures}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument(
        "--settle", type=float, default=1.0, help="seconds after load before PSS is read"
    )
    parser.add_argument("--no-window", action="store_true", help="measure --headless only")
    args = parser.parse_args([] if argv is None else argv)
    if not sys.platform.startswith("linux"):
        print("bench_startup reads /proc: Linux only")
        return 0

    compile_tree(HERE.parent)
    sparrow: list[Sample] = []
    floor: list[Sample] = []
    headless: list[Sample] = []
    note = "--no-window"
    with tempfile.TemporaryDirectory(prefix="sparrow-bench-") as scratch:
        base = Path(scratch)
        for run in range(args.runs):
            env = {**os.environ, "SPARROW_HOME": str(base / f"headless-{run}")}
            headless.append(measure_headless(env))
        if not args.no_window:
            with x_display() as display:
                if display is None:
                    note = "no Xvfb and no DISPLAY"
                else:
                    floor_command = [sys.executable, str(HERE / "floor_window.py")]
                    for run in range(args.runs):
                        env = window_env(display, base / f"window-{run}")
                        sparrow.append(
                            measure_window(sparrow_command(), SPARROW_READY, env, args.settle)
                        )
                        floor.append(measure_window(floor_command, FLOOR_READY, env, args.settle))
    report(args.runs, headless, sparrow, floor, note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
