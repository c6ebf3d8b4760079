"""A real model in the suite: llama.cpp's server with SmolLM2-135M, reached
through the OpenAI-compatible adapter, the way a user's local server is."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path

import anyio
import pytest

from server.core.events import (
    ContextAssembled,
    RunFinished,
    TextDelta,
    UsageReported,
)
from server.core.paths import Paths
from server.engine.bus import EventBus
from server.engine.store import Store
from server.engine.transcript import BadLine, read_transcript
from server.runtime.runs import RunManager, RunRequest
from tests.real_model import CONTEXT, RealModel

pytestmark = pytest.mark.anyio


def configure(sparrow_home: Path, model: RealModel, max_tokens: int) -> None:
    config = sparrow_home / "config" / "config.toml"
    config.write_text(
        config.read_text()
        + f'\n[providers.llamacpp]\nbase_url = "{model.base_url}"\n'
        + f"[models]\nmax_output_tokens = {max_tokens}\n"
    )


def _released_tokens(log: Path) -> int:
    """Prompt + generated tokens of the server's last finished task, as it logs it."""
    found = re.findall(r"stop processing: n_tokens = (\d+)", log.read_text())
    return int(found[-1]) if found else -1


def _wait_idle(model: RealModel, seconds: float = 30.0) -> bool:
    """Whether the server stops working on every slot within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with urllib.request.urlopen(model.base_url.removesuffix("/v1") + "/slots", timeout=5) as a:
            if not any(slot.get("is_processing") for slot in json.load(a)):
                return True
        time.sleep(0.05)
    return False


async def test_a_run_streams_the_real_models_text_and_usage_into_the_transcript(
    real_model: RealModel, paths: Paths, sparrow_home: Path, workspace: Path
) -> None:
    configure(sparrow_home, real_model, max_tokens=48)
    async with RunManager(paths=paths, store=Store(paths.database), bus=EventBus()) as runs:
        info = runs.start(
            # An answer of some length: a fast local model's few words may come in
            # one gathered delta (server/engine/reply.py), which shows no streaming.
            RunRequest(str(workspace), "Count from 1 to 20, one number per line.",
                       model="llamacpp:smollm2")
        )
        finished = await runs.wait(info.id)
    assert finished is not None and finished.status == "completed", finished
    events = [e for e in read_transcript(Path(info.transcript)) if not isinstance(e, BadLine)]
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(d.text for d in deltas).strip()
    usage = [e for e in events if isinstance(e, UsageReported)]
    assert len(usage) == 1
    prompt = usage[0].input_tokens + usage[0].cache_read_input_tokens
    assert prompt > 100 and usage[0].output_tokens > 0  # the system prompt was sent
    assert usage[0].cost_usd is None  # a local server: no price, never a guess
    assembled = next(e for e in events if isinstance(e, ContextAssembled))
    assert assembled.context_window == CONTEXT  # what the server says it serves


async def test_cancel_stops_the_real_model_mid_answer(
    real_model: RealModel, paths: Paths, sparrow_home: Path, workspace: Path
) -> None:
    configure(sparrow_home, real_model, max_tokens=1500)
    task = "Count from 1 to 1000, one number per line, and nothing else."
    async with RunManager(paths=paths, store=Store(paths.database), bus=EventBus()) as runs:
        info = runs.start(RunRequest(str(workspace), task, model="llamacpp:smollm2"))
        _, subscription = runs.follow(info.id)
        # A few numbers into the answer, counted by its text: deltas may come
        # merged (a fast model's burst is gathered into one), lines may not.
        with subscription, anyio.fail_after(60):
            text, ended = "", False
            while text.count("\n") < 3 and not ended:
                for event in await subscription.receive():
                    text += event.text if isinstance(event, TextDelta) else ""
                    ended = ended or isinstance(event, RunFinished)
        assert not ended, f"the model finished before the cancel: {text!r}"
        runs.cancel(info.id, "cancelled by the test")
        finished = await runs.wait(info.id)
    assert finished is not None and finished.status == "cancelled"
    events = [e for e in read_transcript(Path(info.transcript)) if not isinstance(e, BadLine)]
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "cancelled by the test"
    # The server stopped generating when the connection closed, far short of 1,500 tokens.
    assert await anyio.to_thread.run_sync(_wait_idle, real_model)
    assert 0 < _released_tokens(real_model.log) < 900
