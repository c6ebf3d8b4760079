"""Transcript lines in the shapes Claude Code and Codex write them (as observed),
for tests and benches: one builder per kind of line, and writers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

MODEL = "claude-sonnet-4-5-20250929"
CWD = "/home/ada/src/engine"
SESSION = "5d7c1a0e-3b2f-4c1d-9e8f-0a1b2c3d4e5f"
TS = "2025-10-01T12:00:00.000Z"


def line(obj: dict[str, Any]) -> bytes:
    """One JSONL line as the tools write it: compact JSON, then a newline."""
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line(o) for o in objs))
    return path


def append(path: Path, *objs: dict[str, Any]) -> None:
    with path.open("ab") as handle:
        handle.write(b"".join(line(o) for o in objs))


# --- Claude Code ---------------------------------------------------------------------


def _envelope(kind: str, ts: str, sidechain: bool, session: str, cwd: str) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": sidechain,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session,
        "version": "2.0.14",
        "gitBranch": "main",
        "type": kind,
        "uuid": f"u-{os.urandom(4).hex()}",
        "timestamp": ts,
    }


def assistant(
    input_tokens: int = 8,
    cache_creation: int = 0,
    cache_read: int = 0,
    output: int = 1,
    *,
    message_id: str = "msg_01",
    request_id: str = "req_01",
    model: str = MODEL,
    sidechain: bool = False,
    ts: str = TS,
    content: list[dict[str, Any]] | None = None,
    session: str = SESSION,
    cwd: str = CWD,
) -> dict[str, Any]:
    return {
        **_envelope("assistant", ts, sidechain, session, cwd),
        "requestId": request_id,
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content if content is not None else [{"type": "text", "text": "Done."}],
            "stop_reason": None,
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": cache_creation,
                "cache_read_input_tokens": cache_read,
                "output_tokens": output,
                "service_tier": "standard",
            },
        },
    }


def context_line(tokens: int, message_id: str = "msg_01", **kw: Any) -> dict[str, Any]:
    """An assistant line whose context (input + cache creation + cache read) is ``tokens``."""
    return assistant(
        8,
        1_000 if tokens > 1_008 else 0,
        max(0, tokens - 1_008),
        50,
        message_id=message_id,
        request_id="req_" + message_id,
        **kw,
    )


def tool_use(ident: str, name: str = "Bash") -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": {"command": "ls"}}


def user(text: str = "go on", *, ts: str = TS, sidechain: bool = False) -> dict[str, Any]:
    return {
        **_envelope("user", ts, sidechain, SESSION, CWD),
        "message": {"role": "user", "content": text},
    }


def tool_result(size: int, tool_id: str = "toolu_01", ts: str = TS) -> dict[str, Any]:
    """A user line carrying a tool's output of ``size`` characters (most of a transcript)."""
    body = ("x" * 79 + "\n") * (size // 80)
    return {
        **_envelope("user", ts, False, SESSION, CWD),
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": body}],
        },
        "toolUseResult": {"stdout": body[:200], "stderr": "", "interrupted": False},
    }


def progress(ts: str = TS) -> dict[str, Any]:
    return {**_envelope("progress", ts, False, SESSION, CWD), "data": {"type": "hook_progress"}}


def compact_boundary(
    pre: int, post: int | None = None, trigger: str = "auto", ts: str = TS
) -> dict[str, Any]:
    meta: dict[str, Any] = {"trigger": trigger, "preTokens": pre}
    if post is not None:
        meta["postTokens"] = post
    return {
        **_envelope("system", ts, False, SESSION, CWD),
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "level": "info",
        "compactMetadata": meta,
    }


def compact_summary(ts: str = TS) -> dict[str, Any]:
    return {
        **user("This session is being continued from a previous conversation...", ts=ts),
        "isCompactSummary": True,
        "isVisibleInTranscriptOnly": True,
    }


def title(text: str = "Fixing the flaky test") -> dict[str, Any]:
    """A ``summary`` line: a session title, not a compaction."""
    return {"type": "summary", "summary": text, "leafUuid": "685843a1-02c1-4c2c"}


# --- Codex ------------------------------------------------------------------------------

CODEX_ID = "0199a213-81c0-7800-8aa1-bbab2a035a53"
CODEX_MODEL = "gpt-5-codex"
CODEX_WINDOW = 272_000


def codex_file(home: Path, session: str = CODEX_ID) -> Path:
    return home / "sessions" / "2025" / "10" / "01" / f"rollout-2025-10-01T12-00-00-{session}.jsonl"


def codex_meta(session: str = CODEX_ID, cwd: str = CWD, ts: str = TS) -> dict[str, Any]:
    return {
        "timestamp": ts,
        "type": "session_meta",
        "payload": {
            "id": session,
            "timestamp": ts,
            "cwd": cwd,
            "originator": "codex_cli_rs",
            "cli_version": "0.46.0",
            "instructions": None,
        },
    }


def codex_turn(model: str = CODEX_MODEL, cwd: str = CWD, ts: str = TS) -> dict[str, Any]:
    return {
        "timestamp": ts,
        "type": "turn_context",
        "payload": {
            "cwd": cwd,
            "approval_policy": "on-request",
            "model": model,
            "effort": "medium",
            "summary": "auto",
        },
    }


def codex_tokens(
    last_total: int | None, cumulative: int = 0, window: int = CODEX_WINDOW, ts: str = TS
) -> dict[str, Any]:
    """A token_count event; ``last_total=None`` makes the early kind with ``info: null``."""
    if last_total is None:
        info = None
    else:
        cached = last_total // 2
        last = {
            "input_tokens": last_total - 100,
            "cached_input_tokens": cached,
            "output_tokens": 100,
            "reasoning_output_tokens": 40,
            "total_tokens": last_total,
        }
        total = dict(last, total_tokens=cumulative or last_total)
        info = {
            "total_token_usage": total,
            "last_token_usage": last,
            "model_context_window": window,
        }
    return {
        "timestamp": ts,
        "type": "event_msg",
        "payload": {"type": "token_count", "info": info, "rate_limits": None},
    }


def codex_call(name: str = "shell", ts: str = TS) -> dict[str, Any]:
    return {
        "timestamp": ts,
        "type": "response_item",
        "payload": {
            "type": "function_call",
            "name": name,
            "arguments": '{"command":["ls"]}',
            "call_id": "call_1",
        },
    }


def codex_output(size: int = 100, ts: str = TS) -> dict[str, Any]:
    return {
        "timestamp": ts,
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "call_1", "output": "y" * size},
    }


def codex_compacted(ts: str = TS) -> dict[str, Any]:
    return {
        "timestamp": ts,
        "type": "compacted",
        "payload": {"message": "Summary of the work so far..."},
    }


def codex_compacted_event(ts: str = TS) -> dict[str, Any]:
    return {"timestamp": ts, "type": "event_msg", "payload": {"type": "context_compacted"}}
