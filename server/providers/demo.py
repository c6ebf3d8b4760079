"""The built-in demo: a scripted model that lists the workspace, writes a note,
reads it back, runs a shell command on it and gives a final answer. It lets
anyone see a complete run without a model or a key."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from server.providers.base import AssistantMessage, Message, ToolResultMessage, Usage
from server.providers.scripted import ScriptedProvider, ScriptedToolCall, ScriptedTurn

DEMO_FILE = "SPARROW_DEMO.md"
DEMO_CONTENT = (
    "# Sparrow demo\n\n"
    "This note was written by Sparrow's scripted demo model.\n"
    "Every step of the run is in its transcript, ready for `sparrow replay`.\n"
)


def _show_command() -> str:
    return f"type {DEMO_FILE}" if sys.platform == "win32" else f"wc -l {DEMO_FILE}"


def _usage(context: int, output: int) -> Usage:
    return Usage(
        input_tokens=context // 10,
        cache_read_input_tokens=context - context // 10,
        output_tokens=output,
    )


def demo_turns() -> list[ScriptedTurn]:
    """The steps, each with the tool call it makes (the closing words are not
    among them: they follow what the tools returned, see ``demo_turn``)."""
    return [
        ScriptedTurn(
            text="I'll start by looking at what is in the workspace.",
            tool_calls=(ScriptedToolCall("list_dir", {"path": "."}),),
            usage=_usage(1_800, 40),
        ),
        ScriptedTurn(
            text=f"Now I'll write a short note to {DEMO_FILE}.",
            tool_calls=(
                ScriptedToolCall("write_file", {"path": DEMO_FILE, "content": DEMO_CONTENT}),
            ),
            usage=_usage(2_100, 90),
        ),
        ScriptedTurn(
            text="Let me read it back to check what landed on disk.",
            tool_calls=(ScriptedToolCall("read_file", {"path": DEMO_FILE}),),
            usage=_usage(2_300, 35),
        ),
        ScriptedTurn(
            text="And a shell command to confirm it from outside the file tools.",
            tool_calls=(ScriptedToolCall("run_shell", {"command": _show_command()}),),
            usage=_usage(2_500, 30),
        ),
    ]


def _why(result: ToolResultMessage) -> str:
    first = result.content.strip().splitlines()[0] if result.content.strip() else "no reason given"
    return first if len(first) <= 160 else first[:157] + "..."


def closing_words(results: Sequence[ToolResultMessage]) -> str:
    """What the demo says at the end: what each of its tool calls really did."""
    by_tool = {result.tool: result for result in results}
    said = []
    for tool, done, failed in (
        ("list_dir", "listed the workspace", "could not list the workspace"),
        ("write_file", f"wrote {DEMO_FILE}", f"did not write {DEMO_FILE}"),
        ("read_file", "read it back", f"could not read {DEMO_FILE}"),
        ("run_shell", f"ran `{_show_command()}` on it", f"did not run `{_show_command()}`"),
    ):
        result = by_tool.get(tool)
        if result is None:
            continue
        said.append(done if result.ok else f"{failed} ({_why(result)})")
    if not said:
        return "I did nothing in the workspace."
    worked = all(r.ok for r in by_tool.values())
    opening = "Done." if worked else "Not everything went through."
    return (
        f"{opening} I {'; I '.join(said)}. Replay this run any time with `sparrow replay`."
    )


def demo_turn(messages: Sequence[Message]) -> ScriptedTurn:
    """The next turn, from the conversation so far: the steps in order, then
    closing words that say what the tools returned (denied, failed or done)."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    since = messages[last_user + 1 :]
    steps = demo_turns()
    # The step after the last one taken (found by its words: a compaction may
    # have summarised the earlier ones away).
    said = [m.text for m in since if isinstance(m, AssistantMessage)]
    texts = [s.text for s in steps]
    step = texts.index(said[-1]) + 1 if said and said[-1] in texts else len(said)
    if step < len(steps):
        return steps[step]
    results = [m for m in since if isinstance(m, ToolResultMessage)]
    return ScriptedTurn(text=closing_words(results), usage=_usage(2_700, 60))


# The window the demo plays at (its usage figures are of a model of this size).
DEMO_WINDOW = 200_000


def demo_provider(chunk_delay: float = 0.0) -> ScriptedProvider:
    provider = ScriptedProvider(demo_turn, name="demo", chunk_delay=chunk_delay)
    provider.reported_window = DEMO_WINDOW
    return provider
