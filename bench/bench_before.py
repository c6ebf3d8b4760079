"""Start-up against the code before the real models came (issue 9): the same
window and ``--headless`` measures as bench_startup, for this tree and for
the commit before the issue, both run the same way (``python -m desktop.main``
from their own tree) in this environment, where the model libraries are
installed. The goal: within 5 % of the figures before (ratio <= 1.05) — the
adapters and their libraries load with the first real model call, never at
start-up.

Each tree runs its own code: the current folder is kept off ``sys.path``
(PYTHONSAFEPATH), which would otherwise put this checkout's ``desktop/`` and
``server/`` before the other tree's, and a probe checks where they come from.
Both trees are compiled first, as an installed app is: a first start that
compiles the sources is paid once, not at each launch.

    python -m bench.bench_before [--runs N] [--no-window] [--ref COMMIT]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.bench_startup import (
    SPARROW_READY,
    Sample,
    compile_tree,
    measure_headless,
    measure_window,
    window_env,
    x_display,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEFORE = "a20eec7"  # main before issue 9 (real models) landed
GOAL = 1.05


def checkout(ref: str) -> Path:
    """A worktree of ``ref`` under bench/.cache (made once, reused)."""
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", ref],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree = HERE / ".cache" / f"before-{sha}"
    if not (tree / "desktop" / "main.py").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=True)
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(tree), sha],
            check=True,
            capture_output=True,
        )
    return tree


def command(tree: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "desktop.main", *args]


def env_for(tree: Path, base: dict[str, str]) -> dict[str, str]:
    # The tree first on the path (and the current folder off it): its server/
    # and desktop/, and its ui/ beside them.
    return {
        **base,
        "PYTHONPATH": str(tree),
        "PYTHONSAFEPATH": "1",
        "SPARROW_UI_DIR": str(tree / "ui"),
    }


def prepare(tree: Path) -> None:
    """Compile the tree's sources, and check that its own code is what runs."""
    compile_tree(tree)
    probe = "import desktop.main, server.web.serve; print(desktop.main.__file__)"
    found = subprocess.run(
        [sys.executable, "-c", probe],
        env=env_for(tree, dict(os.environ)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(found).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"the tree {tree} would run {found}, not its own code")


def median(samples: list[Sample], attribute: str) -> float:
    return float(statistics.median(getattr(s, attribute) for s in samples))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-window", action="store_true")
    parser.add_argument("--ref", default=BEFORE, help=f"the commit to compare with ({BEFORE})")
    args = parser.parse_args([] if argv is None else argv)
    if not sys.platform.startswith("linux"):
        print("bench_before reads /proc: Linux only")
        return 0
    before = checkout(args.ref)
    trees = {"now": ROOT, "before": before}
    for tree in trees.values():
        prepare(tree)
    samples: dict[str, dict[str, list[Sample]]] = {
        name: {"headless": [], "window": []} for name in trees
    }
    with tempfile.TemporaryDirectory(prefix="sparrow-bench-") as scratch:
        base = Path(scratch)
        for run in range(args.runs):
            for name, tree in trees.items():
                env = env_for(tree, {**os.environ, "SPARROW_HOME": str(base / f"h-{name}-{run}")})
                samples[name]["headless"].append(measure_headless(env, command(tree, "--headless")))
        if not args.no_window:
            with x_display() as display:
                if display is not None:
                    for run in range(args.runs):
                        for name, tree in trees.items():
                            env = env_for(tree, window_env(display, base / f"w-{name}-{run}"))
                            samples[name]["window"].append(
                                measure_window(command(tree), SPARROW_READY, env, 1.0)
                            )
    print(f"Start-up now against before issue 9 ({args.ref}), median of {args.runs} runs")
    print(f"{'measure':<36}{'now':>10}{'before':>10}{'ratio':>8}  goal")
    for kind, attribute, label in (
        ("headless", "seconds", "headless: launch to GET / 200 (s)"),
        ("headless", "memory_mb", "headless: RSS (MB)"),
        ("window", "seconds", "window: launch to page loaded (s)"),
        ("window", "memory_mb", "window: PSS, process tree (MB)"),
    ):
        now, then = samples["now"][kind], samples["before"][kind]
        if not now or not then:
            print(f"{label:<36}{'not measured (no display)':>28}")
            continue
        ours, theirs = median(now, attribute), median(then, attribute)
        ratio = ours / theirs
        verdict = "ok" if ratio <= GOAL else "MISSED"
        print(f"{label:<36}{ours:>10.2f}{theirs:>10.2f}{ratio:>8.2f}  <= {GOAL:g}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
