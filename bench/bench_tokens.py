"""Tokens per second of a real model call, through Sparrow against pydantic-ai alone.

A local server that speaks Chat Completions (tests/fakes, in a process of its
own) streams an answer of K one-word tokens, as fast as it can. The anchor is
pydantic-ai's direct API reading that stream in this process
(``model_request_stream`` over ``OpenAIChatModel``, with Sparrow's tools and a
system prompt of its size, as Sparrow asks). Sparrow's figure is a real
headless server running a conversation turn on the same endpoint, and a
WebSocket client here receiving the tokens. Both ask for the same stream,
alternating, several times. Tokens per second count from the first token to
the last, as a model's rate is told; the time to the first token (for
Sparrow, the run's start: its system prompt, git status, the endpoint
checked) is shown beside it. Goal: Sparrow delivers at least 0.9 of the
anchor's tokens per second.

    python -m bench.bench_tokens [--tokens K] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import anyio
from websockets.sync.client import ClientConnection, connect

from bench.common import Served, headless_server, row

GOAL = 0.9
ADDRESS = re.compile(r"fake vendor at (http://127\.0\.0\.1:\d+)")


def start_vendor(tokens: int) -> tuple[subprocess.Popen[str], str]:
    root = Path(__file__).resolve().parents[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.vendors", "--tokens", str(tokens)],
        stdout=subprocess.PIPE, text=True, cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert process.stdout is not None
    found = ADDRESS.search(process.stdout.readline())
    if not found:
        process.kill()
        raise RuntimeError("the fake vendor did not start")
    return process, found.group(1)


async def _anchor(base: str) -> tuple[int, float, float]:
    from openai import AsyncOpenAI
    from pydantic_ai.direct import model_request_stream
    from pydantic_ai.messages import ModelRequest, PartDeltaEvent, TextPartDelta
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from server.engine.tools.registry import default_tools
    from server.providers.translate import request_parameters

    client = AsyncOpenAI(api_key="bench", base_url=f"{base}/v1", max_retries=0)
    model = OpenAIChatModel("fake-model", provider=OpenAIProvider(openai_client=client))
    # The request Sparrow sends too: its tools and a system prompt of its size.
    parameters = request_parameters(default_tools().specs())
    text = []
    first = last = 0.0
    async with model:
        started = time.perf_counter()
        request = [ModelRequest.user_text_prompt("go", instructions="You are Sparrow. " * 80)]
        async with model_request_stream(
            model, request, model_request_parameters=parameters
        ) as stream:
            async for event in stream:
                if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    text.append(event.delta.content_delta)
                    last = time.perf_counter()
                    first = first or last
    await client.close()
    return len("".join(text).split()), first - started, last - first


def anchor(base: str) -> tuple[float, float]:
    """(tokens per second, seconds to the first token)."""
    tokens, to_first, streaming = anyio.run(_anchor, base)
    return tokens / streaming, to_first


def _post(served: Served, body: dict[str, object]) -> None:
    request = urllib.request.Request(
        f"{served.base}/api/runs", data=json.dumps(body).encode(), method="POST",
        headers={"authorization": f"Bearer {served.token}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        response.read()


def _receive(ws: ClientConnection, text: list[str], times: list[float]) -> None:
    while True:
        event = json.loads(ws.recv())
        if event["type"] == "text_delta":
            text.append(event["text"])
            times.append(time.perf_counter())
        elif event["type"] == "run_finished":
            return


def through_sparrow(served: Served, workspace: Path) -> tuple[float, float, int]:
    """(tokens per second, seconds to the first token, text deltas received)."""
    uri = f"ws://127.0.0.1:{served.port}/ws?token={served.token}"
    text: list[str] = []
    times: list[float] = []
    with connect(uri, origin=f"http://127.0.0.1:{served.port}", max_size=None) as ws:  # type: ignore[arg-type]
        ws.send(json.dumps({"op": "subscribe", "run_id": "*"}))
        time.sleep(0.2)  # the subscription lands before the run starts (setup, not measured)
        receiver = threading.Thread(target=_receive, args=(ws, text, times))
        receiver.start()
        started = time.perf_counter()
        _post(served, {"workspace": str(workspace), "task": "go", "model": "fake:fake-model"})
        receiver.join(timeout=300)
    # The first message carries the first token (and any merged after it).
    first_words = len(text[0].split())
    rest = len("".join(text).split()) - first_words
    return rest / (times[-1] - times[0]), times[0] - started, len(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args([] if argv is None else argv)
    vendor, base = start_vendor(args.tokens)
    try:
        config = (
            f'[providers.fake]\nbase_url = "{base}/v1"\nkind = "openai-chat"\n'
            '[autonomy]\nmode = "autonomous"\nlevel = 0.9\n'
        )
        with tempfile.TemporaryDirectory() as scratch:
            home = Path(scratch) / "home"
            (home / "config").mkdir(parents=True)
            (home / "config" / "config.toml").write_text(config)
            workspace = Path(scratch) / "ws"
            workspace.mkdir()
            alone, sparrow = [], []
            with headless_server({"SPARROW_HOME": str(home)}) as served:
                through_sparrow(served, workspace)  # warm: the SDKs' first import
                anchor(base)
                for _ in range(args.runs):
                    alone.append(anchor(base))
                    sparrow.append(through_sparrow(served, workspace))
    finally:
        vendor.terminate()
        vendor.wait()
    ours = statistics.median(rate for rate, _, _ in sparrow)
    theirs = statistics.median(rate for rate, _ in alone)
    print(f"Tokens per second, {args.tokens:,} tokens from a local Chat Completions server, "
          f"median of {args.runs}")
    print(row("pydantic-ai alone (anchor)", f"{theirs:,.0f}/s", "-", None))
    print(row("through Sparrow to a WebSocket client", f"{ours:,.0f}/s",
              f">= {GOAL:g} x anchor", (GOAL * theirs) / ours))
    print(f"  ratio to the anchor: {ours / theirs:.2f}")
    first_ours = statistics.median(first for _, first, _ in sparrow) * 1000
    first_theirs = statistics.median(first for _, first in alone) * 1000
    print(row("time to the first token, anchor", f"{first_theirs:,.0f} ms", "-", None))
    print(row("time to the first token, Sparrow (run start)", f"{first_ours:,.0f} ms", "-", None))
    deltas = statistics.median(count for _, _, count in sparrow)
    print(f"  text deltas received for {args.tokens:,} tokens: {deltas:,.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
