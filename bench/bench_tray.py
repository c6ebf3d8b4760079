"""The tray's own idle cost: the idle ``sparrow-desktop`` window under Xvfb with a
tray host (Debian's ``trayer``, so Qt makes the tray icon) against the same
window with no tray host (no icon), CPU per minute and memory.

    python -m bench.bench_tray [--runs N] [--seconds S] [--settle S] [--repeats N]

Both run the same notice and run-watching services (they do not depend on the
tray), so the difference is the icon, its menu and the X embedding. CPU is
user + system time of the whole process tree (QtWebEngine's processes
included) over ``--seconds`` of idling, scaled to a minute; memory is the
main process's RSS and the tree's PSS at the end. Goal (issue 14): no
measurable CPU at idle (the tray adds under 0.1 s of CPU a minute) and under
10 MB more memory.

Two launched windows differ by 10-20 MB from launch to launch whatever the
tray, so the memory goal is also measured in-process, where that noise is
absent: ``--repeats`` fresh processes under the same tray host each load what
the window process has before its tray (desktop.window and its services) and
show a Qt window with a menu bar (the pywebview window's Qt, without the web
engine), then read their RSS before and after importing and making the tray (the
icon shown and embedded, its four state icons drawn, its menu with runs and an
approval); the median of the differences is the tray's own cost.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.bench_startup import Launched, process_tree, pss_mb, rss_mb, sparrow_command, window_env
from bench.common import median, xvfb_display

READY = "Sparrow window ready"
CPU_GOAL = 0.1  # s of CPU a minute the tray may add
MEMORY_GOAL = 10.0  # MB
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class Idle:
    cpu_per_minute: float  # s
    rss: float  # MB
    pss: float  # MB


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


@contextmanager
def tray_host(display: str, on: bool) -> Iterator[None]:
    if not on:
        yield
        return
    program = shutil.which("trayer")
    if program is None:
        raise SystemExit("bench_tray needs trayer (scripts/system-deps.sh test)")
    host = subprocess.Popen(
        [program, "--edge", "top", "--widthtype", "request", "--SetDockType", "false"],
        env={**os.environ, "DISPLAY": display},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # it takes the tray selection
    try:
        yield
    finally:
        host.terminate()
        host.wait(10)


def measure(display: str, with_tray: bool, seconds: float, settle: float) -> Idle:
    with (
        tempfile.TemporaryDirectory(prefix="sparrow-bench-tray-") as home,
        tray_host(display, with_tray),
    ):
        launched = Launched(sparrow_command(), window_env(display, Path(home)))
        try:
            launched.wait_line(lambda line: line == READY)
            time.sleep(settle)
            pid = launched.process.pid
            pids = process_tree(pid)
            before = cpu_seconds(pids)
            time.sleep(seconds)
            used = cpu_seconds(pids) - before
            return Idle(used * 60 / seconds, rss_mb(pid), pss_mb(pid))
        finally:
            launched.stop()


def tray_child() -> None:
    """One in-process sample: prints {"rss": [before, after]} (MB)."""
    import gc

    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow, QSystemTrayIcon

    def settle(seconds: float) -> None:
        loop = QEventLoop()
        QTimer.singleShot(int(seconds * 1000), loop.quit)
        loop.exec()
        QCoreApplication.processEvents()

    # What the window process has loaded before it makes its tray (desktop.window
    # and the background services it starts whether or not there is a tray).
    from desktop.activity import Activity, LiveRun, Waiting
    from desktop.window import icon_path

    app = QApplication([])
    window = QMainWindow()  # the app's own window is there before its tray
    window.resize(800, 600)
    window.menuBar().addMenu("File").addAction("Quit")  # its menu bar: fonts are loaded
    window.show()
    settle(1.0)
    if not QSystemTrayIcon.isSystemTrayAvailable():
        raise SystemExit("bench_tray: Qt sees no system tray")
    gc.collect()
    before = rss_mb(os.getpid())

    from desktop.tray import Tray

    tray = Tray(icon=icon_path(), on_action=lambda action: None)
    tray.show()
    for state in ("idle", "running", "approval", "warning"):
        tray._icon_for(state)  # each state's icon is drawn once and kept
    runs = tuple(LiveRun(f"r-{n}", f"task number {n} of the bench") for n in range(3))
    tray.show_activity(Activity(runs=runs, approvals=(Waiting("r-1", "c-1", "write_file"),)))
    settle(1.5)
    gc.collect()
    after = rss_mb(os.getpid())
    print(json.dumps({"rss": [before, after]}))
    del tray, window, app


def in_process(display: str, repeats: int) -> dict[str, list[float]]:
    """The tray's own memory, ``repeats`` fresh processes: the differences, MB."""
    added: dict[str, list[float]] = {"rss": []}
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    env.pop("WAYLAND_DISPLAY", None)
    with tray_host(display, True):
        for _ in range(repeats):
            done = subprocess.run(
                [sys.executable, "-m", "bench.bench_tray", "--child"],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            )
            sample = json.loads(done.stdout.strip().splitlines()[-1])
            for key, (before, after) in sample.items():
                added[key].append(after - before)
    return added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_tray")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=10, help="in-process samples")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv if argv is not None else [])
    if args.child:
        tray_child()
        return 0
    program = shutil.which("Xvfb")
    if program is None or not sys.platform.startswith("linux"):
        print("bench_tray: needs Linux and Xvfb; skipped")
        return 0
    samples: dict[bool, list[Idle]] = {True: [], False: []}
    with xvfb_display(program) as display:
        assert display, "Xvfb did not start"
        added = in_process(display, args.repeats)
        print(f"The tray's own memory, in-process ({args.repeats} processes; MB added)")
        print(f"{'':24}{'median':>10}{'min':>10}{'max':>10}{'goal':>10}{'ratio':>8}")
        values = added["rss"]
        mid = median(values)
        print(
            f"{'RSS MB (main)':24}{mid:10.2f}{min(values):10.2f}{max(values):10.2f}"
            f"{MEMORY_GOAL:10g}{max(mid, 0.0) / MEMORY_GOAL:8.2f}"
        )
        print()
        for _ in range(args.runs):
            for with_tray in (True, False):  # alternate: both share the machine's load
                samples[with_tray].append(measure(display, with_tray, args.seconds, args.settle))
    print(
        f"Tray idle cost ({args.runs} runs each, {args.seconds:g} s idle after "
        f"{args.settle:g} s settle; median)"
    )
    print(f"{'':24}{'with tray':>12}{'no tray':>12}{'added':>10}{'goal':>10}{'ratio':>8}")
    figures = (
        ("CPU s / minute", "cpu_per_minute", CPU_GOAL),
        ("RSS MB (main)", "rss", MEMORY_GOAL),
        ("PSS MB (tree)", "pss", MEMORY_GOAL),
    )
    for label, name, goal in figures:
        on = median([getattr(s, name) for s in samples[True]])
        off = median([getattr(s, name) for s in samples[False]])
        added = on - off
        ratio = max(added, 0.0) / goal
        print(f"{label:24}{on:12.2f}{off:12.2f}{added:10.2f}{goal:10g}{ratio:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
