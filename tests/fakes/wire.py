"""A ``Reply`` as each vendor streams it (server-sent events), and a failure as
each vendor words it. Checked against the SDKs' own parsers and pydantic-ai's
models (tests/providers/test_fake_vendors.py drives them)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakes.script import Failure, Reply

Event = tuple[str | None, dict[str, Any]]  # (SSE event name, data)


def sse(event: Event) -> bytes:
    name, data = event
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def pieces(reply: Reply) -> list[str]:
    if reply.tokens:
        return [f"w{i} " for i in range(reply.tokens)]
    text = reply.text
    return [text[i : i + reply.chunk] for i in range(0, len(text), reply.chunk)]


def _arg_pieces(args: dict[str, Any]) -> list[str]:
    text = json.dumps(args)
    third = max(1, len(text) // 3)
    return [text[i : i + third] for i in range(0, len(text), third)]


def _call_id(prefix: str, index: int, given: str) -> str:
    return given or f"{prefix}_{index}"


# --- Anthropic Messages ----------------------------------------------------------


def anthropic_events(reply: Reply, model: str) -> Iterator[Event]:
    usage = reply.usage
    start_usage = {
        "input_tokens": usage.input if usage else 0,
        "cache_creation_input_tokens": usage.cache_write if usage else 0,
        "cache_read_input_tokens": usage.cache_read if usage else 0,
        "output_tokens": 1,
    }
    yield "message_start", {
        "type": "message_start",
        "message": {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": start_usage,
        },
    }
    index = 0
    if reply.thinking:
        yield "content_block_start", {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        }
        for piece in [reply.thinking[i : i + 8] for i in range(0, len(reply.thinking), 8)]:
            yield "content_block_delta", {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "thinking_delta", "thinking": piece},
            }
        yield "content_block_delta", {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "signature_delta", "signature": "c2lnbmF0dXJl"},
        }
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    if reply.text or reply.tokens:
        yield "content_block_start", {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        }
        for piece in pieces(reply):
            yield "content_block_delta", {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": piece},
            }
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    for number, call in enumerate(reply.calls, start=1):
        yield "content_block_start", {
            "type": "content_block_start",
            "index": index,
            "content_block": {
                "type": "tool_use",
                "id": _call_id("toolu", number, call.id),
                "name": call.name,
                "input": {},
            },
        }
        for piece in _arg_pieces(call.args):
            yield "content_block_delta", {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece},
            }
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use" if reply.calls else "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": usage.output if usage else 0},
    }
    yield "message_stop", {"type": "message_stop"}


ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def anthropic_error(failure: Failure) -> dict[str, Any]:
    kind = ANTHROPIC_ERRORS.get(failure.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": failure.message or kind}}


# --- OpenAI Responses --------------------------------------------------------------


def _response(model: str, status: str, output: list[Any], usage: Any) -> dict[str, Any]:
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": 1790000000,
        "status": status,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "temperature": 1.0,
        "top_p": 1.0,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "usage": usage,
    }


def responses_events(reply: Reply, model: str) -> Iterator[Event]:
    seq = iter(range(1_000_000))
    output: list[dict[str, Any]] = []
    yield "response.created", {
        "type": "response.created",
        "sequence_number": next(seq),
        "response": _response(model, "in_progress", [], None),
    }
    index = 0
    if reply.text or reply.tokens:
        item = {"id": "msg_fake", "type": "message", "status": "in_progress", "role": "assistant",
                "content": []}
        yield "response.output_item.added", {
            "type": "response.output_item.added", "sequence_number": next(seq),
            "output_index": index, "item": item,
        }
        yield "response.content_part.added", {
            "type": "response.content_part.added", "sequence_number": next(seq),
            "item_id": "msg_fake", "output_index": index, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        }
        text = ""
        for piece in pieces(reply):
            text += piece
            yield "response.output_text.delta", {
                "type": "response.output_text.delta", "sequence_number": next(seq),
                "item_id": "msg_fake", "output_index": index, "content_index": 0,
                "delta": piece, "logprobs": [],
            }
        part = {"type": "output_text", "text": text, "annotations": []}
        yield "response.output_text.done", {
            "type": "response.output_text.done", "sequence_number": next(seq),
            "item_id": "msg_fake", "output_index": index, "content_index": 0, "text": text,
            "logprobs": [],
        }
        yield "response.content_part.done", {
            "type": "response.content_part.done", "sequence_number": next(seq),
            "item_id": "msg_fake", "output_index": index, "content_index": 0, "part": part,
        }
        done = {**item, "status": "completed", "content": [part]}
        output.append(done)
        yield "response.output_item.done", {
            "type": "response.output_item.done", "sequence_number": next(seq),
            "output_index": index, "item": done,
        }
        index += 1
    for number, call in enumerate(reply.calls, start=1):
        item_id = f"fc_{number}"
        item = {"id": item_id, "type": "function_call", "status": "in_progress",
                "call_id": _call_id("call", number, call.id), "name": call.name, "arguments": ""}
        yield "response.output_item.added", {
            "type": "response.output_item.added", "sequence_number": next(seq),
            "output_index": index, "item": item,
        }
        for piece in _arg_pieces(call.args):
            yield "response.function_call_arguments.delta", {
                "type": "response.function_call_arguments.delta", "sequence_number": next(seq),
                "item_id": item_id, "output_index": index, "delta": piece,
            }
        arguments = json.dumps(call.args)
        yield "response.function_call_arguments.done", {
            "type": "response.function_call_arguments.done", "sequence_number": next(seq),
            "item_id": item_id, "output_index": index, "arguments": arguments,
        }
        done = {**item, "status": "completed", "arguments": arguments}
        output.append(done)
        yield "response.output_item.done", {
            "type": "response.output_item.done", "sequence_number": next(seq),
            "output_index": index, "item": done,
        }
        index += 1
    usage = reply.usage
    wire_usage = None
    if usage is not None:
        total_in = usage.input + usage.cache_read
        wire_usage = {
            "input_tokens": total_in,
            "input_tokens_details": {"cached_tokens": usage.cache_read},
            "output_tokens": usage.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": total_in + usage.output,
        }
    yield "response.completed", {
        "type": "response.completed",
        "sequence_number": next(seq),
        "response": _response(model, "completed", output, wire_usage),
    }


# --- OpenAI Chat Completions (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter) ---------


def chat_events(reply: Reply, model: str, include_usage: bool) -> Iterator[Event]:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1790000000,
            "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        return None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in pieces(reply):
        yield chunk({"content": piece})
    for number, call in enumerate(reply.calls):
        yield chunk({"tool_calls": [{
            "index": number, "id": _call_id("call", number + 1, call.id), "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }]})
        for piece in _arg_pieces(call.args):
            yield chunk({"tool_calls": [{"index": number, "function": {"arguments": piece}}]})
    yield chunk({}, "tool_calls" if reply.calls else "stop")
    usage = reply.usage
    if include_usage and usage is not None:
        prompt = usage.input + usage.cache_read
        yield None, {**base, "choices": [], "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": usage.output,
            "total_tokens": prompt + usage.output,
            "prompt_tokens_details": {"cached_tokens": usage.cache_read},
        }}


OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}
OPENAI_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}


def openai_error(failure: Failure) -> dict[str, Any]:
    return {
        "error": {
            "message": failure.message or f"error {failure.status}",
            "type": OPENAI_TYPES.get(failure.status, "server_error"),
            "param": None,
            "code": failure.code or OPENAI_CODES.get(failure.status),
        }
    }
