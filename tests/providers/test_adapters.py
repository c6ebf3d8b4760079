"""The real-model adapter, driven through the vendors' own SDKs (pydantic-ai's
direct API over anthropic and openai) against local servers that speak each
wire format: Anthropic Messages, OpenAI Responses, Chat Completions."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import anyio
import pytest

from server.core.settings import ModelSettings
from server.providers.adapter import ModelAdapter
from server.providers.base import (
    AssistantMessage,
    ContextTooLong,
    ProviderError,
    RetryNotice,
    StreamPart,
    TextChunk,
    Thinking,
    ThinkingBlock,
    ThinkingChunk,
    ToolArgsChunk,
    ToolCall,
    ToolCallChunk,
    ToolResultMessage,
    ToolSpec,
    UsageChunk,
    UserMessage,
)
from server.providers.endpoints import Endpoint
from tests.fakes.script import Call, Drop, Failure, Reply, Stall, Usage
from tests.fakes.vendors import FakeVendor

pytestmark = pytest.mark.anyio

KINDS = ["anthropic", "openai", "openai-chat"]
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/responses",
         "openai-chat": "/v1/chat/completions"}
KEY = "sk-test-0123456789abcdefghij"
READ = ToolSpec("read_file", "Read a file.", {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
})


@pytest.fixture
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor() as fake:
        yield fake


def adapter(kind: str, vendor: FakeVendor, **settings: object) -> ModelAdapter:
    names = {"anthropic": "anthropic", "openai": "openai", "openai-chat": "fakechat"}
    endpoint = Endpoint(
        name=names[kind],
        label={"anthropic": "Anthropic", "openai": "OpenAI"}.get(kind, "Fake chat"),
        kind=kind,  # type: ignore[arg-type]
        base_url=vendor.base_url if kind == "anthropic" else f"{vendor.base_url}/v1",
        key_source="ANTHROPIC_API_KEY" if kind == "anthropic" else "the keyring",
        api_key=KEY,
    )
    return ModelAdapter(endpoint, "fake-model", ModelSettings(**settings))  # type: ignore[arg-type]


async def stream(model: ModelAdapter, *messages: object, system: str = "") -> list[StreamPart]:
    async with model:
        return [
            part
            async for part in model.stream(
                list(messages) or [UserMessage("hello")], [READ], system  # type: ignore[arg-type]
            )
        ]


def text_of(parts: list[StreamPart]) -> str:
    return "".join(p.text for p in parts if isinstance(p, TextChunk))


@pytest.mark.parametrize("kind", KINDS)
async def test_text_streams_in_pieces_with_usage_and_the_cache(
    kind: str, vendor: FakeVendor
) -> None:
    usage = Usage(input=120, cache_read=900, cache_write=0 if kind != "anthropic" else 300,
                  output=42)
    vendor.script(Reply(text="Hello from the fake model.", usage=usage))
    parts = await stream(adapter(kind, vendor), system="You are Sparrow.")
    assert len([p for p in parts if isinstance(p, TextChunk)]) > 3
    assert text_of(parts) == "Hello from the fake model."
    reported = [p.usage for p in parts if isinstance(p, UsageChunk)]
    assert len(reported) == 1
    assert (
        reported[0].input_tokens,
        reported[0].cache_read_input_tokens,
        reported[0].cache_creation_input_tokens,
        reported[0].output_tokens,
    ) == (120, 900, usage.cache_write, 42)
    sent = vendor.last(PATHS[kind])
    assert "You are Sparrow." in str(sent.body)  # the system prompt went out
    header = sent.headers.get("x-api-key") or sent.headers.get("authorization", "")
    assert KEY in header


@pytest.mark.parametrize("kind", KINDS)
async def test_tool_call_arguments_stream_then_the_whole_call(
    kind: str, vendor: FakeVendor
) -> None:
    vendor.script(Reply(text="Reading.", calls=(Call("read_file", {"path": "notes/a.txt"}),)))
    parts = await stream(adapter(kind, vendor))
    pieces = [p for p in parts if isinstance(p, ToolArgsChunk)]
    assert len([p for p in pieces if p.text]) >= 2
    assert {p.tool for p in pieces} == {"read_file"}
    assert "".join(p.text for p in pieces) == '{"path": "notes/a.txt"}'
    calls = [p.call for p in parts if isinstance(p, ToolCallChunk)]
    assert [(c.name, c.args) for c in calls] == [("read_file", {"path": "notes/a.txt"})]
    assert calls[0].id == pieces[0].call_id


@pytest.mark.parametrize("kind", KINDS)
async def test_a_call_id_the_conversation_used_already_gets_one_of_its_own(
    kind: str, vendor: FakeVendor
) -> None:
    """Some OpenAI-compatible servers number calls per response (call_1 at every
    turn): a run's calls must each have their own id (results, approvals, cards)."""
    vendor.script(Reply(calls=(Call("read_file", {"path": "b.txt"}, id="call_1"),)))
    history = [
        UserMessage("read a.txt, then b.txt"),
        AssistantMessage("", (ToolCall("call_1", "read_file", {"path": "a.txt"}),)),
        ToolResultMessage("call_1", "read_file", "a", ok=True),
    ]
    parts = await stream(adapter(kind, vendor), *history)
    calls = [p.call for p in parts if isinstance(p, ToolCallChunk)]
    pieces = {p.call_id for p in parts if isinstance(p, ToolArgsChunk)}
    assert [c.id for c in calls] == ["call_1-2"] and pieces == {"call_1-2"}


@pytest.mark.parametrize("kind", KINDS)
async def test_the_conversation_goes_out_whole(kind: str, vendor: FakeVendor) -> None:
    """A history with a tool call and its result, and a follow-up: all of it sent."""
    vendor.script(Reply(text="Done."))
    history = [
        UserMessage("read a.txt"),
        AssistantMessage("Reading.", (ToolCall("call_9", "read_file", {"path": "a.txt"}),)),
        ToolResultMessage("call_9", "read_file", "hello from a.txt", ok=True),
        AssistantMessage("It says hello."),
        UserMessage("and now?"),
    ]
    await stream(adapter(kind, vendor), *history)
    body = str(vendor.last(PATHS[kind]).body)
    for text in ("read a.txt", "call_9", "hello from a.txt", "It says hello.", "and now?"):
        assert text in body


async def test_anthropic_thinking_streams_and_goes_back_with_its_signature(
    vendor: FakeVendor,
) -> None:
    vendor.script(Reply(thinking="Let me think about the files.", text="Here."), Reply(text="Ok."))
    model = adapter("anthropic", vendor, thinking="low")
    parts = await stream(model)
    assert "".join(p.text for p in parts if isinstance(p, ThinkingChunk)) == (
        "Let me think about the files."
    )
    blocks = [p.thinking for p in parts if isinstance(p, ThinkingBlock)]
    assert blocks == [Thinking("Let me think about the files.", "c2lnbmF0dXJl", "anthropic")]
    assert vendor.last().body["thinking"]["type"] in ("enabled", "adaptive")
    # The block goes back, signed, with the next request.
    await stream(model, UserMessage("hi"), AssistantMessage("Here.", (), tuple(blocks)),
                 UserMessage("more"))
    sent = vendor.last().body["messages"][1]["content"][0]
    assert (sent["type"], sent["signature"]) == ("thinking", "c2lnbmF0dXJl")


@pytest.mark.parametrize("kind", KINDS)
async def test_a_rate_limit_is_waited_out_as_asked_then_the_answer_comes(
    kind: str, vendor: FakeVendor
) -> None:
    vendor.script(Failure(429, "slow down", retry_after=0.2), Reply(text="Now it works."))
    parts = await stream(adapter(kind, vendor))
    notices = [p for p in parts if isinstance(p, RetryNotice)]
    assert [n.wait for n in notices] == [0.2]
    assert "rate limited (429); retrying in 0.2 s (retry 1 of 4)" in notices[0].text
    assert text_of(parts) == "Now it works."
    assert len(vendor.requests) == 2


@pytest.mark.parametrize("kind", KINDS)
async def test_rate_limits_past_the_retries_end_in_one_clear_line(
    kind: str, vendor: FakeVendor
) -> None:
    vendor.script(*[Failure(429, "slow down", retry_after=0.05)] * 3)
    with pytest.raises(ProviderError, match=r"kept refusing requests for the rate limit \(429\)"):
        await stream(adapter(kind, vendor, max_retries=2))
    assert len(vendor.requests) == 3


@pytest.mark.parametrize("kind", KINDS)
async def test_a_refused_key_is_not_retried_and_names_the_fix(
    kind: str, vendor: FakeVendor
) -> None:
    vendor.script(Failure(401, "invalid x-api-key"))
    model = adapter(kind, vendor)
    with pytest.raises(ProviderError) as caught:
        await stream(model)
    message = str(caught.value)
    assert f"refused the API key (the key from {model.endpoint.key_source}) (401)" in message
    assert f"`sparrow keys set {model.endpoint.name}`" in message
    assert len(vendor.requests) == 1


@pytest.mark.parametrize("kind", KINDS)
async def test_a_connection_dropped_mid_stream_voids_the_turn_and_asks_again(
    kind: str, vendor: FakeVendor
) -> None:
    vendor.script(Drop(after=4), Reply(text="The whole answer."))
    parts = await stream(adapter(kind, vendor))
    kinds = [type(p).__name__ for p in parts]
    discarded = kinds.index("ResponseDiscarded")
    assert "TextChunk" in kinds[:discarded]  # something had streamed, and was voided
    after = parts[discarded + 1 :]
    assert text_of(after) == "The whole answer."
    assert len(vendor.requests) == 2


@pytest.mark.parametrize("kind", KINDS)
async def test_a_connection_that_drops_twice_fails_the_turn(
    kind: str, vendor: FakeVendor
) -> None:
    vendor.script(Drop(after=4), Drop(after=4))
    with pytest.raises(ProviderError, match="dropped in the middle of the response, twice"):
        await stream(adapter(kind, vendor))
    assert len(vendor.requests) == 2


@pytest.mark.parametrize("kind", KINDS)
async def test_cancel_stops_a_streaming_turn_at_once(kind: str, vendor: FakeVendor) -> None:
    vendor.script(Stall(after=4))
    model = adapter(kind, vendor)
    seen: list[StreamPart] = []
    async with model:
        with anyio.move_on_after(30) as timeout, anyio.CancelScope() as scope:
            async for part in model.stream([UserMessage("go")], [READ]):
                seen.append(part)
                if isinstance(part, TextChunk):
                    scope.cancel()
    assert not timeout.cancelled_caught and seen
    # The server saw the client go, in the middle of its answer.
    assert await anyio.to_thread.run_sync(vendor.disconnected.wait, 5)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_context_too_long_and_an_unknown_model_each_say_so(
    kind: str, vendor: FakeVendor
) -> None:
    too_long = (
        "prompt is too long: 250000 tokens > 200000 maximum"
        if kind == "anthropic"
        else "This model's maximum context length is 8192 tokens."
    )
    vendor.script(
        Failure(400, too_long, code="context_length_exceeded"),
        Failure(404, "model: fake-model not found", code="model_not_found"),
    )
    with pytest.raises(ContextTooLong, match="no longer fits fake-model's context window"):
        await stream(adapter(kind, vendor))
    with pytest.raises(ProviderError, match="has no model 'fake-model'"):
        await stream(adapter(kind, vendor))


async def test_a_server_that_sends_no_usage_says_nothing_rather_than_zero(
    vendor: FakeVendor,
) -> None:
    vendor.script(Reply(text="No figures.", usage=None))
    parts = await stream(adapter("openai-chat", vendor))
    assert text_of(parts) == "No figures." and not any(isinstance(p, UsageChunk) for p in parts)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_a_local_server_that_is_not_running_is_one_line() -> None:
    unused_tcp_port = _free_port()
    endpoint = Endpoint(
        name="ollama", label="Ollama", kind="openai-chat",
        base_url=f"http://127.0.0.1:{unused_tcp_port}/v1", local=True,
    )
    with pytest.raises(ProviderError) as caught:
        async with ModelAdapter(endpoint, "qwen3:8b", ModelSettings()):
            pass
    assert str(caught.value) == (
        f"cannot connect to Ollama at http://127.0.0.1:{unused_tcp_port}/v1 "
        "(connection refused): is Ollama running?"
    )


async def test_a_local_server_without_the_model_names_the_ones_it_has(
    vendor: FakeVendor,
) -> None:
    vendor.models = ["llama3:latest", "qwen2.5-coder:7b"]
    endpoint = Endpoint(
        name="ollama", label="Ollama", kind="openai-chat",
        base_url=f"{vendor.base_url}/v1", local=True,
    )
    with pytest.raises(ProviderError) as caught:
        async with ModelAdapter(endpoint, "qwen3:8b", ModelSettings()):
            pass
    assert str(caught.value) == (
        "Ollama has no model 'qwen3:8b' (`ollama pull qwen3:8b`); "
        "it has: llama3:latest, qwen2.5-coder:7b"
    )
    async with ModelAdapter(endpoint, "llama3", ModelSettings()):  # :latest is implied
        pass


async def test_a_local_server_of_one_model_that_reports_no_window(vendor: FakeVendor) -> None:
    """llama.cpp serves one model under any name, and may say nothing of its window."""
    endpoint = Endpoint(
        name="llamacpp", label="llama.cpp server", kind="openai-chat",
        base_url=f"{vendor.base_url}/v1", local=True,
    )
    vendor.script(Reply(text="hi"))
    model = ModelAdapter(endpoint, "whatever", ModelSettings())
    assert text_of(await stream(model)) == "hi"
    assert model.reported_window is None
