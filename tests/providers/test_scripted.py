import json
from pathlib import Path

import pytest

from server.providers.base import (
    AssistantMessage,
    Message,
    TextChunk,
    ToolCall,
    ToolCallChunk,
    ToolResultMessage,
    Usage,
    UsageChunk,
    UserMessage,
)
from server.providers.demo import closing_words, demo_turn, demo_turns
from server.providers.scripted import (
    ScriptedProvider,
    ScriptedToolCall,
    ScriptedTurn,
    ScriptError,
    ScriptExhausted,
    load_script,
    parse_script,
)

pytestmark = pytest.mark.anyio


async def _play(provider: ScriptedProvider) -> list[object]:
    return [part async for part in provider.stream([UserMessage("go")], [])]


async def test_a_turn_streams_text_in_chunks_then_calls_then_usage() -> None:
    usage = Usage(input_tokens=5, output_tokens=2)
    turn = ScriptedTurn(
        "Hello there, world.", (ScriptedToolCall("read_file", {"path": "a"}),), usage
    )
    parts = await _play(ScriptedProvider([turn]))
    texts = [p.text for p in parts if isinstance(p, TextChunk)]
    assert len(texts) == 3 and "".join(texts) == "Hello there, world."
    calls = [p.call for p in parts if isinstance(p, ToolCallChunk)]
    assert [(c.name, c.args, c.id) for c in calls] == [("read_file", {"path": "a"}, "call_1_1")]
    assert isinstance(parts[-1], UsageChunk) and parts[-1].usage == usage


async def test_running_out_of_script_fails_loudly() -> None:
    provider = ScriptedProvider([ScriptedTurn("only one")])
    await _play(provider)
    with pytest.raises(ScriptExhausted, match="has 1 turn"):
        await _play(provider)


async def test_a_function_can_play_the_model() -> None:
    seen: list[int] = []

    def model(messages: object) -> ScriptedTurn:
        seen.append(len(messages))  # type: ignore[arg-type]
        return ScriptedTurn("ok")

    provider = ScriptedProvider(model)
    await _play(provider)
    await _play(provider)
    assert seen == [1, 1] and provider.turns_played == 2


def test_the_documented_format_parses(tmp_path: Path) -> None:
    script = {
        "turns": [
            {
                "text": "hi",
                "tool_calls": [{"tool": "write_file", "args": {"path": "a", "content": "b"}}],
                "usage": {
                    "input_tokens": 1,
                    "cache_creation_input_tokens": 2,
                    "cache_read_input_tokens": 3,
                    "output_tokens": 4,
                },
            },
            {},
        ]
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(script))
    turns = load_script(path)
    assert turns[0].tool_calls[0] == ScriptedToolCall("write_file", {"path": "a", "content": "b"})
    assert turns[0].usage is not None and turns[0].usage.context_tokens == 6
    assert turns[1] == ScriptedTurn()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], 'expected an object with a "turns" list'),
        ({"turns": [1]}, r"turns\[0\]: expected an object"),
        ({"turns": [{"text": 3}]}, r"turns\[0\].text: expected a string"),
        (
            {"turns": [{"tool_calls": [{"args": {}}]}]},
            r"tool_calls\[0\]: expected an object with a \"tool\"",
        ),
        ({"turns": [{"usage": {"input_tokens": -1}}]}, r"usage.input_tokens"),
        ({"turns": [{"usage": {"tokens": 1}}]}, r"usage: expected an object with keys"),
        ({"turns": [{"txt": "typo"}]}, r"unknown key\(s\) txt"),
    ],
)
def test_malformed_scripts_say_where(data: object, message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        parse_script(data)


def test_an_unreadable_script_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ScriptError, match="not valid JSON"):
        load_script(bad)
    with pytest.raises(ScriptError, match="cannot be read"):
        load_script(tmp_path / "missing.json")


def test_the_demo_reads_writes_runs_a_command_and_answers() -> None:
    tools = [call.tool for turn in demo_turns() for call in turn.tool_calls]
    assert {"read_file", "write_file", "run_shell"} <= set(tools)
    history: list[Message] = [UserMessage("show me")]
    for step in demo_turns():
        assert demo_turn(history) == step
        history.append(AssistantMessage(step.text, tuple(
            ToolCall(f"c{len(history)}", c.tool, c.args) for c in step.tool_calls)))
        history += [ToolResultMessage(f"c{len(history)}", c.tool, "fine", True)
                    for c in step.tool_calls]
    closing = demo_turn(history)
    assert closing.tool_calls == () and closing.text.startswith("Done. I listed the workspace")


def test_the_demo_s_closing_words_follow_what_the_tools_returned() -> None:
    """Denied (plan mode, emergency stop, Supervised off a terminal) or failed
    (a read-only disk): the demo says so instead of claiming it wrote."""
    results = [
        ToolResultMessage("1", "list_dir", "a.txt", True),
        ToolResultMessage("2", "write_file", "denied: read-only mode: mutating tools are denied",
                          False),
        ToolResultMessage("3", "read_file", "error: SPARROW_DEMO.md: no such file", False),
        ToolResultMessage("4", "run_shell", "denied: read-only mode: exec tools are denied", False),
    ]
    words = closing_words(results)
    assert words.startswith("Not everything went through.")
    assert "did not write SPARROW_DEMO.md (denied: read-only mode" in words
    assert "wrote SPARROW_DEMO.md" not in words.replace("did not write", "")
    assert "did not run" in words and "ran `" not in words
