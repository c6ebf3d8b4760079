"""The built-in demo: a scripted model that lists the workspace, writes a note,
reads it back, runs a shell command on it and gives a final answer. It lets
anyone see a complete run without a model or a key."""

from __future__ import annotations

import sys

from server.providers.base import Usage
from server.providers.scripted import ScriptedProvider, ScriptedToolCall, ScriptedTurn

DEMO_FILE = "SPARROW_DEMO.md"
DEMO_CONTENT = (
    "# Sparrow demo\n\n"
    "This note was written by Sparrow's scripted demo model.\n"
    "Every step of the run is in its transcript, ready for `sparrow replay`.\n"
)


def _show_command() -> str:
    return f"type {DEMO_FILE}" if sys.platform == "win32" else f"wc -l {DEMO_FILE}"


def demo_turns() -> list[ScriptedTurn]:
    def usage(context: int, output: int) -> Usage:
        return Usage(
            input_tokens=context // 10,
            cache_read_input_tokens=context - context // 10,
            output_tokens=output,
        )

    return [
        ScriptedTurn(
            text="I'll start by looking at what is in the workspace.",
            tool_calls=(ScriptedToolCall("list_dir", {"path": "."}),),
            usage=usage(1_800, 40),
        ),
        ScriptedTurn(
            text=f"Now I'll write a short note to {DEMO_FILE}.",
            tool_calls=(
                ScriptedToolCall("write_file", {"path": DEMO_FILE, "content": DEMO_CONTENT}),
            ),
            usage=usage(2_100, 90),
        ),
        ScriptedTurn(
            text="Let me read it back to check what landed on disk.",
            tool_calls=(ScriptedToolCall("read_file", {"path": DEMO_FILE}),),
            usage=usage(2_300, 35),
        ),
        ScriptedTurn(
            text="And a shell command to confirm it from outside the file tools.",
            tool_calls=(ScriptedToolCall("run_shell", {"command": _show_command()}),),
            usage=usage(2_500, 30),
        ),
        ScriptedTurn(
            text=(
                f"Done. I listed the workspace, wrote {DEMO_FILE}, read it back and "
                f"ran `{_show_command()}` on it. Replay this run any time with `sparrow replay`."
            ),
            usage=usage(2_700, 60),
        ),
    ]


def demo_provider(chunk_delay: float = 0.0) -> ScriptedProvider:
    return ScriptedProvider(demo_turns(), name="demo", chunk_delay=chunk_delay)
