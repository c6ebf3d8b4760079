"""The context meter and compaction, against the model call they precede.

- The meter's update per event: a message joins the conversation and a
  ``context_updated`` event goes out (through a real run channel and bus),
  as the loop does after every change; microseconds per event.
- A compaction of a 120,000-character conversation as the loop runs it
  (plan, extract summary, the handoff doc written to disk, the ``compacted``
  event with the whole new conversation), with the scripted model (no model
  call in the summary).
- The anchor: one model call with that same conversation, through Sparrow's
  adapter and pydantic-ai to a local Chat Completions server (tests/fakes, in
  its own process) that answers one word at once: the least a real call
  costs, with no model time at all.

Goals (ratio <= 1.0 meets them): an update costs under 1 % of that call;
a whole compaction costs less than the call it precedes.

    python -m bench.bench_context [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from bench.bench_tokens import start_vendor
from bench.common import row

CHARS = 120_000


def conversation() -> list[object]:
    from server.providers.base import AssistantMessage, ToolCall, ToolResultMessage, UserMessage

    messages: list[object] = [UserMessage("Refactor the parser and keep the tests green.")]
    n = 0
    while sum(len(getattr(m, "text", "") or getattr(m, "content", "")) for m in messages) < CHARS:
        call = ToolCall(f"c{n}", "read_file", {"path": f"src/mod{n}.py"})
        messages.append(AssistantMessage(f"Reading module {n} to see how it parses.", (call,)))
        body = "".join(f"def f{n}_{i}(x):\n    return x * {i}\n" for i in range(40))
        messages.append(ToolResultMessage(f"c{n}", "read_file", body, ok=True))
        n += 1
    messages.append(AssistantMessage("Now the tests."))
    return messages


def meter_update_seconds(messages: list[object], rounds: int = 20_000) -> float:
    from server.core.settings import ContextSettings
    from server.engine.bus import EventBus
    from server.engine.channel import RunChannel
    from server.engine.context_tracker import ContextTracker
    from server.engine.tools.registry import default_tools

    channel = RunChannel("bench", EventBus())
    tracker = ContextTracker(channel, ContextSettings(), system="x" * 8000,
                             specs=default_tools().specs(), window=200_000)
    picked = messages[1:41]
    started = time.perf_counter()
    for i in range(rounds):
        tracker.added(picked[i % len(picked)])  # type: ignore[arg-type]
        tracker.emit(1)
    return (time.perf_counter() - started) / rounds


async def _compaction(messages: list[object], workspace: Path) -> float:
    from server.core.settings import BudgetSettings, ContextSettings
    from server.engine.bus import EventBus
    from server.engine.channel import RunChannel
    from server.engine.compactor import Compactor
    from server.engine.context_tracker import ContextTracker
    from server.engine.conversation import Conversation
    from server.engine.guards import Budget
    from server.engine.run_hooks import RunHooks
    from server.engine.tools.registry import default_tools
    from server.engine.workspace import Workspace
    from server.providers.scripted import ScriptedProvider

    class Run:  # what the compactor reads of a run
        run_id = "bench"
        task = "Refactor the parser and keep the tests green."
        provider = ScriptedProvider([], name="scripted")

    Run.workspace = Workspace(workspace)  # type: ignore[attr-defined]
    channel = RunChannel("bench", EventBus())
    tracker = ContextTracker(channel, ContextSettings(), system="x" * 8000,
                             specs=default_tools().specs(), window=200_000)
    conv = Conversation(channel, messages)  # type: ignore[arg-type]
    tracker.count(conv.messages)
    hooks = RunHooks(None, channel, run_id="bench", session_id="s", workspace=workspace,
                     transcript=workspace / "t.jsonl")
    compactor = Compactor(Run(), channel, conv, tracker, hooks,  # type: ignore[arg-type]
                          Budget(BudgetSettings(), "scripted"))
    started = time.perf_counter()
    done = await compactor.compact(1, "bench")
    took = time.perf_counter() - started
    assert done
    return took


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args([] if argv is None else argv)
    messages = conversation()
    vendor, base = start_vendor(1)
    try:
        calls, compactions, updates = [], [], []
        for _ in range(args.runs):
            calls.append(anyio.run(model_call, base, messages))
            with tempfile.TemporaryDirectory() as tmp:
                compactions.append(anyio.run(_compaction, messages, Path(tmp)))
            updates.append(meter_update_seconds(messages, 5_000))
    finally:
        vendor.terminate()
        vendor.wait()
    call = statistics.median(calls[1:] or calls)  # the first pays the SDK's import
    compaction = statistics.median(compactions)
    update = statistics.median(updates)
    size = sum(len(getattr(m, "text", "") or getattr(m, "content", "")) for m in messages)
    print(f"Context meter and compaction: a {size:,}-character conversation of "
          f"{len(messages)} messages, medians of {args.runs}")
    print(row("a model call with it (anchor: local server)", f"{call * 1000:.1f} ms", "-", None))
    print(row("meter update per event", f"{update * 1e6:.1f} µs", "< 1% of call",
              update / (0.01 * call)))
    print(row("compaction (extract, handoff doc, event)", f"{compaction * 1000:.1f} ms",
              "< the call", compaction / call))


async def model_call(base: str, messages: list[object]) -> float:
    """One request of the conversation through Sparrow's adapter (seconds)."""
    from server.core.settings import ModelSettings
    from server.providers.adapter import ModelAdapter
    from server.providers.endpoints import Endpoint

    endpoint = Endpoint(name="fake", label="Fake", kind="openai-chat", base_url=f"{base}/v1",
                        key_source="", api_key="bench")
    adapter = ModelAdapter(endpoint, "fake-model", ModelSettings())
    async with adapter:
        started = time.perf_counter()
        async for _ in adapter.stream(messages, [], "You are Sparrow."):  # type: ignore[arg-type]
            pass
        return time.perf_counter() - started


if __name__ == "__main__":
    main(sys.argv[1:])
