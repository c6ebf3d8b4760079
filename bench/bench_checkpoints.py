"""(d) Checkpoints: a generated workspace of 20,000 files in 200 folders.

Each step runs on Sparrow's checkpoint engine and, on an identical copy in the
same run, on the git command line doing the same work:

- the first checkpoint (git: ``git add -A && git commit``);
- an incremental checkpoint after changing one file, with the file tools'
  ``changed_paths`` hint, and without it as the agent loop takes them: told
  what changed by the kernel's file watch (inotify), and, for reference, with
  the watch off (a stat scan of the whole workspace, what every checkpoint
  falls back to when the watch cannot vouch); git: ``git add -A && git commit``;
- a rewind of that file (git: ``git checkout -- FILE``); Sparrow's rewind also
  takes a checkpoint of the present first, so it can be undone. A whole-
  workspace rewind (checkpoint + restore) is shown too, without a git anchor.

Figures are medians of several rounds; ratio = Sparrow / git, so <= 1.0 means
no slower than git. Goals: incremental checkpoint and rewind ratio <= 1.0 and
under 100 ms.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import median, row

FOLDERS = 200
FILES_PER_FOLDER = 100
ROUNDS = 7
GOAL_MS = 100.0

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def generate(root: Path, seed: int = 1) -> int:
    """20,000 small text files (about 800 bytes each) in 200 folders."""
    rnd = random.Random(seed)
    total = 0
    for d in range(FOLDERS):
        folder = root / f"pkg{d:03d}"
        folder.mkdir(parents=True)
        for f in range(FILES_PER_FOLDER):
            lines = [f"# module {d}.{f}\n"]
            lines += [f"value_{i} = {rnd.randrange(10**9)}\n" for i in range(40)]
            data = "".join(lines).encode()
            (folder / f"mod{f:03d}.py").write_bytes(data)
            total += len(data)
    return total


def _git(cwd: Path, *commands: str) -> float:
    """Time one shell line of git commands, as a user would type it."""
    env = {**os.environ, **_GIT_ENV}
    started = time.perf_counter()
    subprocess.run(" && ".join(commands), shell=True, cwd=cwd, env=env, check=True)
    return time.perf_counter() - started


def _timed(action: Callable[..., object], *args: object, **kwargs: object) -> float:
    started = time.perf_counter()
    action(*args, **kwargs)
    return time.perf_counter() - started


def measure() -> dict[str, float]:
    # Imported here so that `python -m bench` lists benches without importing the engine.
    from server.core.paths import Paths
    from server.core.settings import CheckpointSettings
    from server.engine.checkpoints import CheckpointStore
    from server.engine.checkpoints.watch import WATCHES
    from server.engine.store import Store

    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="sparrow-bench-cp-") as tmp:
        base = Path(tmp)
        ours, theirs = base / "ours", base / "git"
        figures["bytes"] = generate(ours)
        shutil.copytree(ours, theirs, symlinks=True)
        home = base / "home"  # a private SPARROW_HOME, without touching the environment
        paths = Paths(home / "config", home / "state", home / "data", home / "cache").ensure()
        store = Store(paths.database)
        checkpoints = CheckpointStore(paths, CheckpointSettings(), store)
        _git(theirs, "git init -q", "git config core.autocrlf false")

        first = checkpoints.create(ours, run_id="bench", turn=0, tool="start")
        figures["first"] = first.duration_ms / 1000
        figures["first_git"] = _git(theirs, "git add -A", "git commit -q -m first")
        figures["disk"] = checkpoints.disk_usage(ours)
        figures["disk_git"] = sum(
            p.stat().st_size for p in (theirs / ".git").rglob("*") if p.is_file()
        )

        target = "pkg123/mod045.py"
        original = (ours / target).read_bytes()
        hinted, scanned, full, git_commit = [], [], [], []
        for n in range(ROUNDS):
            for folder in (ours, theirs):
                (folder / target).write_bytes(original + f"# edit {n} a\n".encode())
            hinted.append(
                _timed(
                    checkpoints.create,
                    ours,
                    run_id="bench",
                    turn=n,
                    tool="write_file",
                    changed_paths=[target],
                )
            )
            git_commit.append(_git(theirs, "git add -A", f"git commit -q -m edit{n}a"))
            for folder in (ours, theirs):
                (folder / target).write_bytes(original + f"# edit {n} b\n".encode())
            scanned.append(
                _timed(checkpoints.create, ours, run_id="bench", turn=n, tool="run_shell")
            )
            _git(theirs, "git add -A", f"git commit -q -m edit{n}b")
            for folder in (ours, theirs):
                (folder / target).write_bytes(original + f"# edit {n} c\n".encode())
            WATCHES.forget(str(ours))  # the fallback: a stat scan of everything
            full.append(_timed(checkpoints.create, ours, run_id="bench", turn=n, tool="scan"))
            checkpoints.create(ours, run_id="bench", turn=n, tool="rearm")  # the watch again
            _git(theirs, "git add -A", f"git commit -q -m edit{n}c")
        figures["incremental_hint"] = median(hinted)
        figures["incremental_scan"] = median(scanned)
        figures["incremental_full"] = median(full)
        figures["incremental_git"] = median(git_commit)

        base_cp = checkpoints.create(ours, run_id="bench", turn=99, tool="base")
        rewinds, full_rewinds, checkouts = [], [], []
        for n in range(ROUNDS):
            for folder in (ours, theirs):
                (folder / target).write_bytes(b"scribbled over\n" * (n + 1))
            rewinds.append(_timed(checkpoints.rewind, ours, base_cp.id, paths=[target]))
            checkouts.append(_git(theirs, f"git checkout -- {target}"))
            assert (ours / target).read_bytes() == (theirs / target).read_bytes()
            (ours / target).write_bytes(b"scribbled again\n")
            full_rewinds.append(_timed(checkpoints.rewind, ours, base_cp.id))
            assert (ours / target).read_bytes() == (theirs / target).read_bytes()
        figures["rewind_file"] = median(rewinds)
        figures["rewind_full"] = median(full_rewinds)
        figures["rewind_git"] = median(checkouts)
        figures["checkpoints"] = len(checkpoints.list(ours))
        store.close()
    return figures


def main() -> None:
    f = measure()
    ms = {k: v * 1000 for k, v in f.items()}
    print(
        "(d) checkpoints: 20,000 files in 200 folders "
        f"({f['bytes'] / 1e6:.1f} MB), Sparrow vs the git command line, "
        f"medians of {ROUNDS} rounds"
    )

    def line(name: str, ours: str, git: str, goal: str) -> None:
        value = f"{ms[ours]:.0f} ms"
        ratio = ms[ours] / ms[git]
        print(row(name, value, goal, ratio) + f"   (git {ms[git]:.0f} ms)")

    line("first checkpoint", "first", "first_git", "report")
    line(
        "incremental, one file, changed_paths hint",
        "incremental_hint",
        "incremental_git",
        "<= git, <100ms",
    )
    line(
        "incremental, one file, no hint (file watch)",
        "incremental_scan",
        "incremental_git",
        "<= git, <100ms",
    )
    # For reference, no goal: what a checkpoint costs when the watch cannot vouch.
    full = ms["incremental_full"]
    print(
        row("incremental, one file, watch off: stat scan", f"{full:.0f} ms", "-", None)
        + f"   (git {ms['incremental_git']:.0f} ms; x{full / ms['incremental_git']:.2f})"
    )
    line("rewind one file (checkpoint first)", "rewind_file", "rewind_git", "<= git, <100ms")
    print(
        row(
            "rewind whole workspace (checkpoint + restore)",
            f"{ms['rewind_full']:.0f} ms",
            "< 100 ms",
            ms["rewind_full"] / GOAL_MS,
        )
    )
    for name in ("incremental_hint", "incremental_scan", "rewind_file"):
        print(row(f"{name} against 100 ms", f"{ms[name]:.0f} ms", "< 100 ms", ms[name] / GOAL_MS))
    print(
        f"  disk after the first checkpoint: shadow repository {f['disk'] / 1e6:.1f} MB, "
        f"git's .git {f['disk_git'] / 1e6:.1f} MB; {int(f['checkpoints'])} checkpoints in all"
    )


if __name__ == "__main__":
    main()
