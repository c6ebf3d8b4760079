"""The suite's one real model: llama.cpp's llama-server with SmolLM2-135M
(scripts/llama-server.sh builds both once per machine; `make test` passes the
folder as SPARROW_LLAMA_SERVER). Started once per test session on a free port."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

READY_TIMEOUT_S = 60.0
CONTEXT = 2048


@dataclass(frozen=True)
class RealModel:
    base_url: str  # http://127.0.0.1:PORT/v1
    model: str  # what /v1/models says
    log: Path


def built() -> Path | None:
    """The folder holding llama-server and model.gguf, if it was built."""
    given = os.environ.get("SPARROW_LLAMA_SERVER", "").strip()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sparrow-build"
    for folder in ([Path(given)] if given else []) + sorted(cache.glob("llama-server-*")):
        if (folder / "stamp").is_file() and (folder / "llama-server").is_file():
            return folder
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _get(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=5) as answer:
        data: dict[str, object] = json.load(answer)
    return data


@contextmanager
def running(folder: Path, log: Path) -> Iterator[RealModel]:
    port = _free_port()
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(folder / "llama-server"), "-m", str(folder / "model.gguf"), "--host",
             "127.0.0.1", "--port", str(port), "-c", str(CONTEXT), "-t", "2", "--no-webui",
             # Greedy decoding: the same answer every run (a sampled one sometimes
             # refuses to count, and a test of streaming then sees no stream).
             "--temp", "0", "--seed", "1"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if process.poll() is not None:
                tail = log.read_text()[-2000:]
                raise RuntimeError(f"llama-server exited ({process.returncode}):\n{tail}")
            try:
                if _get(f"{base}/health").get("status") == "ok":
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama-server not ready in {READY_TIMEOUT_S:g} s:\n"
                                   f"{log.read_text()[-2000:]}")
            time.sleep(0.1)
        models = _get(f"{base}/v1/models")["data"]
        assert isinstance(models, list)
        yield RealModel(f"{base}/v1", str(models[0]["id"]), log)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
