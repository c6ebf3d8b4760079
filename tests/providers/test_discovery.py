"""What an endpoint offers: a local server that is not running is told without
loading the SDKs (the window asks on its first page), in the words a run uses;
one that runs lists its models through the SDK."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from server.providers.discovery import list_models
from server.providers.endpoints import Endpoint
from tests.fakes.vendors import FakeVendor

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _ollama(port: int) -> Endpoint:
    return Endpoint(
        name="ollama", label="Ollama", kind="openai-chat",
        base_url=f"http://127.0.0.1:{port}/v1", local=True,
    )


def test_a_local_server_that_is_not_running_is_told_without_the_sdks() -> None:
    port = _free_port()
    code = f"""
import anyio, json, sys
sys.path.insert(0, {str(ROOT)!r})
from server.providers.discovery import list_models
from server.providers.endpoints import Endpoint
endpoint = Endpoint(name="ollama", label="Ollama", kind="openai-chat",
                    base_url="http://127.0.0.1:{port}/v1", local=True)
offer = anyio.run(list_models, endpoint)
print(json.dumps({{"reachable": offer.reachable, "error": offer.error,
                   "loaded": sorted(m for m in ("openai", "anthropic", "pydantic_ai")
                                    if m in sys.modules)}}))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.splitlines()[-1])
    assert found == {
        "reachable": False,
        # The words of a run that cannot reach it (test_adapters.py).
        "error": f"cannot connect to Ollama at http://127.0.0.1:{port}/v1 "
        "(connection refused): is Ollama running?",
        "loaded": [],
    }


@pytest.mark.anyio
async def test_a_local_server_that_runs_lists_its_models() -> None:
    with FakeVendor(models=["qwen3:8b", "llama3.2"]) as vendor:
        offer = await list_models(_ollama(vendor.port))
    assert (offer.reachable, offer.models, offer.error) == (True, ["llama3.2", "qwen3:8b"], "")


@pytest.mark.anyio
async def test_a_name_that_does_not_resolve_is_told_in_the_sdks_words() -> None:
    endpoint = Endpoint(
        name="box", label="Box", kind="openai-chat",
        base_url="http://no-such-host.invalid:8080/v1", local=True,
    )
    offer = await list_models(endpoint)
    assert not offer.reachable
    assert offer.error.startswith("cannot connect to Box at http://no-such-host.invalid:8080/v1 (")
    assert "unknown error" not in offer.error.lower()
