"""The desktop bundle for the tests and benches: built once per set of sources and
installed distributions, and kept outside the tree, since a build takes minutes.

``bundle-<hash>/Sparrow`` in ``$SPARROW_BUILD_CACHE``, else
``${XDG_CACHE_HOME:-~/.cache}/sparrow-build`` (where scripts/llama-server.sh
keeps the suite's model),
where the hash covers every file the bundle is built from (the spec and the
scripts beside it, server/, desktop/, ui/, assets/, pyproject.toml) and the
name and version of every installed distribution (there is no lock file: the
environment is the lock). A build runs in a scratch folder and is renamed into
place when complete, under a file lock, so an interrupted or concurrent build
never leaves a half bundle where a test would take it for a whole one. Older
bundles are removed, keeping the newest few.

``SPARROW_BUNDLE=DIR`` (the folder holding ``sparrow-desktop``, such as
``dist/Sparrow`` after ``make package``) tests that bundle instead, as it is.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "sparrow.spec"
SOURCES = ("packaging", "server", "desktop", "ui", "assets", "pyproject.toml")
NAME = "Sparrow"
EXECUTABLE = "sparrow-desktop"
KEEP = 2  # bundles kept: this one and the one before (another branch's, often)
BUILD_TIMEOUT = 3600.0  # guards against a hang only


def cache_root(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get("SPARROW_BUILD_CACHE"):
        return Path(env["SPARROW_BUILD_CACHE"])
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sparrow-build"


def _source_files() -> Iterator[Path]:
    for name in SOURCES:
        path = ROOT / name
        if path.is_file():
            yield path
            continue
        for file in sorted(path.rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts and file.suffix != ".pyc":
                yield file


def sources_hash() -> str:
    digest = hashlib.sha256()
    digest.update(f"{sys.version}|{platform.machine()}|{sys.platform}\n".encode())
    for file in _source_files():
        digest.update(str(file.relative_to(ROOT)).encode() + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    installed = sorted(
        f"{d.metadata['Name']}=={d.version}" for d in distributions() if d.metadata["Name"]
    )
    digest.update("\n".join(installed).encode())
    return digest.hexdigest()[:16]


def executable(bundle: Path) -> Path:
    return bundle / (EXECUTABLE + (".exe" if sys.platform == "win32" else ""))


def contents(bundle: Path) -> Path:
    """Where PyInstaller 6 puts everything but the executable."""
    return bundle / "_internal"


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _prune(root: Path, keep: Path) -> None:
    bundles = sorted(
        (p for p in root.glob("bundle-*") if p != keep and p.is_dir()),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for old in bundles[KEEP - 1 :]:
        shutil.rmtree(old, ignore_errors=True)
    for scratch in root.glob("building-*"):
        shutil.rmtree(scratch, ignore_errors=True)


def build(target: Path, log: Path) -> float:
    """Run PyInstaller on the spec into ``target`` (its dist and work folders); seconds."""
    started = time.monotonic()
    with log.open("w") as out:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "PyInstaller",
                "--noconfirm",
                "--log-level",
                "WARN",
                "--distpath",
                str(target / "dist"),
                "--workpath",
                str(target / "work"),
                str(SPEC),
            ],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-4000:]
        raise RuntimeError(f"PyInstaller failed ({done.returncode}); the end of {log}:\n{tail}")
    return time.monotonic() - started


def cached_bundle() -> tuple[Path, float | None]:
    """The bundle built from these sources; the build's seconds, or None if it was cached."""
    given = os.environ.get("SPARROW_BUNDLE")
    if given:
        if not executable(Path(given)).is_file():
            raise FileNotFoundError(f"SPARROW_BUNDLE={given} holds no {EXECUTABLE}")
        return Path(given), None
    root = cache_root()
    final = root / f"bundle-{sources_hash()}"
    bundle = final / NAME
    with _locked(root):
        if executable(bundle).is_file():
            final.touch()  # the newest is kept when pruning
            return bundle, None
        _prune(root, final)
        scratch = root / f"building-{final.name}"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        seconds = build(scratch, scratch / "build.log")
        shutil.rmtree(scratch / "work", ignore_errors=True)  # the bundle alone is kept
        shutil.move(scratch / "dist", final)
        shutil.move(scratch / "build.log", final / "build.log")
        shutil.rmtree(scratch, ignore_errors=True)
        return bundle, seconds
