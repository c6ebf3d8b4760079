"""The PyInstaller bundle: its size, and its start-up against the source launch.

(a) Size: the bundle folder's total (bytes of its files; the tarball would be
    smaller) and the ten largest files, with their share.
(b) Start-up, the bundle's ``sparrow-desktop`` against the checkout's (what
    ``make run`` starts), alternating: the window under Xvfb, launch to the
    page's ``Sparrow window ready`` line; and ``--headless``, launch to the
    first authenticated ``GET /`` answering 200. Ratio bundle / source; no goal
    is set (a frozen program reads its modules from one archive and its
    libraries from one folder, so it may start faster or slower), the figures
    are reported.

The bundle comes from tests/bundle/cache.py: built from these sources once
(minutes; the build's time is printed), reused after.

    python -m bench.bench_package [--runs N] [--no-window]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench.bench_startup import (
    SPARROW_READY,
    Sample,
    measure_headless,
    measure_window,
    sparrow_command,
    window_env,
    x_display,
)
from tests.bundle.cache import cached_bundle, executable

ROOT = Path(__file__).resolve().parents[1]
MB = 1024 * 1024
TOP = 10


def sizes(bundle: Path) -> tuple[int, list[tuple[int, str]]]:
    files = [
        (p.stat().st_size, str(p.relative_to(bundle)))
        for p in bundle.rglob("*")
        if p.is_file() and not p.is_symlink()
    ]
    return sum(size for size, _ in files), sorted(files, reverse=True)[:TOP]


def report_size(bundle: Path) -> None:
    total, largest = sizes(bundle)
    print(f"bundle: {bundle}")
    print(f"size: {total / MB:.0f} MB in total; the {TOP} largest files:")
    for size, name in largest:
        print(f"  {size / MB:>7.1f} MB  {100 * size / total:>4.1f} %  {name}")
    share = sum(size for size, _ in largest) / total
    print(f"  ({100 * share:.0f} % of the bundle)")


def source_env(base: dict[str, str]) -> dict[str, str]:
    # This checkout's code, as `make run` from it runs it.
    return {**base, "PYTHONPATH": str(ROOT)}


def bundle_env(base: dict[str, str]) -> dict[str, str]:
    env = dict(base)
    for name in ("PYTHONPATH", "SPARROW_UI_DIR"):
        env.pop(name, None)
    return env


def median(samples: list[Sample]) -> float:
    return float(statistics.median(s.seconds for s in samples))


def row(label: str, bundled: list[Sample], source: list[Sample]) -> None:
    ours, theirs = median(bundled), median(source)
    print(f"{label:<34}{ours:>9.2f}{theirs:>9.2f}{ours / theirs:>8.2f}")
    print(
        "  each run, bundle / source (s): "
        + ", ".join(
            f"{b.seconds:.2f}/{s.seconds:.2f}" for b, s in zip(bundled, source, strict=True)
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument("--no-window", action="store_true", help="measure --headless only")
    args = parser.parse_args([] if argv is None else argv)
    if not sys.platform.startswith("linux"):
        print("bench_package measures the Linux bundle: Linux only")
        return 0
    bundle, built = cached_bundle()
    how = f"built in {built:.0f} s" if built is not None else "cached"
    print(f"Sparrow bundle ({how})")
    report_size(bundle)

    frozen = [str(executable(bundle))]
    headless: tuple[list[Sample], list[Sample]] = ([], [])
    window: tuple[list[Sample], list[Sample]] = ([], [])
    note = "--no-window"
    with tempfile.TemporaryDirectory(prefix="sparrow-bench-") as scratch:
        base = Path(scratch)
        for run in range(args.runs):
            env = {**os.environ, "SPARROW_HOME": str(base / f"headless-{run}")}
            headless[0].append(measure_headless(bundle_env(env), [*frozen, "--headless"]))
            headless[1].append(measure_headless(source_env(env), sparrow_command("--headless")))
        if not args.no_window:
            with x_display() as display:
                if display is None:
                    note = "no Xvfb and no DISPLAY"
                else:
                    for run in range(args.runs):
                        env = window_env(display, base / f"window-{run}")
                        window[0].append(
                            measure_window(frozen, SPARROW_READY, bundle_env(env), 0.0)
                        )
                        window[1].append(
                            measure_window(sparrow_command(), SPARROW_READY, source_env(env), 0.0)
                        )
    print(f"start-up, median of {args.runs} runs")
    print(f"{'measure':<34}{'bundle':>9}{'source':>9}{'ratio':>8}")
    row("headless: launch to GET / 200 (s)", *headless)
    if window[0]:
        row("window: launch to page loaded (s)", *window)
    else:
        print(f"window: not measured ({note})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
