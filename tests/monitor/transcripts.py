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


def aged(path: Path, seconds: float = 60.0) -> Path:
    """``path`` as last written ``seconds`` ago: a session unchanged since before
    a monitor started (one written just before may count as changed since)."""
    when = os.stat(path).st_mtime - seconds
    os.utime(path, (when, when))
    return path


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


def tool_use(ident: str, name: str = "Bash", **args: Any) -> dict[str, Any]:
    """A tool_use block; ``args`` are its input (default: ``command="ls"``)."""
    return {"type": "tool_use", "id": ident, "name": name, "input": args or {"command": "ls"}}


def calls(*blocks: dict[str, Any], message_id: str = "msg_calls", **kw: Any) -> dict[str, Any]:
    """An assistant line carrying ``blocks`` (text and tool_use), with some usage."""
    return assistant(8, 1_000, 20_000, 50, message_id=message_id, content=list(blocks), **kw)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def result(
    tool_id: str, text: str = "ok", *, is_error: bool = False, ts: str = TS, cwd: str = CWD
) -> dict[str, Any]:
    """The user line answering a call: ``is_error`` for a call that failed or was refused."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
    if is_error:
        block["is_error"] = True
    return {
        **_envelope("user", ts, False, SESSION, cwd),
        "message": {"role": "user", "content": [block]},
    }


def user(
    text: str = "go on", *, ts: str = TS, sidechain: bool = False, cwd: str = CWD
) -> dict[str, Any]:
    return {
        **_envelope("user", ts, sidechain, SESSION, cwd),
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


def codex_call(
    name: str = "shell", ts: str = TS, *, call_id: str = "call_1", **arguments: Any
) -> dict[str, Any]:
    """A function_call; ``arguments`` default to ``command=["ls"]``."""
    return {
        "timestamp": ts,
        "type": "response_item",
        "payload": {
            "type": "function_call",
            "name": name,
            "arguments": json.dumps(arguments or {"command": ["ls"]}),
            "call_id": call_id,
        },
    }


def codex_output(
    size: int = 100, ts: str = TS, *, call_id: str = "call_1", output: str | None = None
) -> dict[str, Any]:
    return {
        "timestamp": ts,
        "type": "response_item",
        "payload": {
            "type": "function_call_output",
            "call_id": call_id,
            "output": "y" * size if output is None else output,
        },
    }


def codex_patch(patch: str, call_id: str = "call_p", ts: str = TS) -> dict[str, Any]:
    """apply_patch as Codex calls it: a custom tool whose input is the patch."""
    return {
        "timestamp": ts,
        "type": "response_item",
        "payload": {
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": call_id,
            "name": "apply_patch",
            "input": patch,
        },
    }


def codex_patch_output(call_id: str = "call_p", exit_code: int = 0, ts: str = TS) -> dict[str, Any]:
    output = {
        "output": "Success. Updated the following files:\n" if exit_code == 0 else "error",
        "metadata": {"exit_code": exit_code, "duration_seconds": 0.0},
    }
    return {
        "timestamp": ts,
        "type": "response_item",
        "payload": {
            "type": "custom_tool_call_output",
            "call_id": call_id,
            "output": json.dumps(output),
        },
    }


def codex_message(role: str, text: str, ts: str = TS) -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    return {
        "timestamp": ts,
        "type": "response_item",
        "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
    }


def codex_compacted(ts: str = TS) -> dict[str, Any]:
    return {
        "timestamp": ts,
        "type": "compacted",
        "payload": {"message": "Summary of the work so far..."},
    }


def codex_compacted_event(ts: str = TS) -> dict[str, Any]:
    return {"timestamp": ts, "type": "event_msg", "payload": {"type": "context_compacted"}}


# --- sessions that did some work (for handoff docs) -------------------------------------


def claude_work(
    cwd: str, tokens: int = 142_300, model: str = MODEL, ts: str = TS
) -> list[dict[str, Any]]:
    """A Claude Code session that edits, writes, runs the tests (which fail), is
    refused a command, fails an edit, decides and is blocked; its last context is
    ``tokens``."""
    at = {"ts": ts, "cwd": cwd}
    return [
        user("Port the scheduler to the new queue.", **at),
        calls(
            text_block("I'll start with the queue.\ndecision: keep the old API as a shim"),
            tool_use(
                "toolu_e1", "Edit", file_path=f"{cwd}/src/queue.py", old_string="a", new_string="b"
            ),
            tool_use("toolu_w1", "Write", file_path=f"{cwd}/src/shim.py", content="x = 1\n"),
            message_id="msg_w1",
            **at,
        ),
        result("toolu_e1", "The file has been updated.", **at),
        result("toolu_w1", "File created successfully", **at),
        calls(
            tool_use("toolu_m1", "MultiEdit", file_path="/elsewhere/notes.md", edits=[]),
            tool_use(
                "toolu_x1", "Edit", file_path=f"{cwd}/src/never.py", old_string="q", new_string="r"
            ),
            tool_use(
                "toolu_b1", "Bash", command="pytest -q tests/test_queue.py", description="tests"
            ),
            tool_use("toolu_b2", "Bash", command="rm -rf build && npm test", description="all"),
            tool_use("toolu_b3", "Bash", command="git status"),
            message_id="msg_w2",
            **at,
        ),
        result("toolu_m1", "Applied 2 edits", **at),
        result("toolu_x1", "String to replace not found in file.", is_error=True, **at),
        result("toolu_b1", "Exit code 1\n1 failed, 3 passed", is_error=True, **at),
        result(
            "toolu_b2",
            "The user doesn't want to proceed with this tool use. The tool use was rejected.",
            is_error=True,
            **at,
        ),
        result("toolu_b3", "On branch main", **at),
        user("Also: pytest is slow here, blocked by the CI quota.", **at),
        calls(
            text_block("Blocker: the fixture for tests/conftest.py is missing."),
            message_id="msg_w3",
            **at,
        ),
        context_line(tokens, "msg_last", model=model, **at),
    ]


def codex_work(cwd: str, session: str = CODEX_ID, ts: str = TS) -> list[dict[str, Any]]:
    """A Codex session that patches files (one patch fails), runs the tests
    through each shell tool, decides and is blocked."""
    return [
        codex_meta(session, cwd=cwd, ts=ts),
        codex_turn(cwd=cwd, ts=ts),
        codex_message("user", "<environment_context>cwd</environment_context>", ts=ts),
        codex_message("user", "Make the parser streaming.", ts=ts),
        codex_message("assistant", "Decision: parse line by line, no buffering.", ts=ts),
        codex_patch(
            "*** Begin Patch\n*** Update File: src/parser.rs\n@@\n-a\n+b\n"
            "*** Add File: src/stream.rs\n+pub fn x() {}\n*** End Patch\n",
            "call_p1",
            ts=ts,
        ),
        codex_patch_output("call_p1", ts=ts),
        codex_patch(
            "*** Begin Patch\n*** Update File: src/broken.rs\n*** End Patch\n", "call_p2", ts=ts
        ),
        codex_patch_output("call_p2", exit_code=1, ts=ts),
        codex_call(
            "shell", ts=ts, call_id="call_s1", command=["bash", "-lc", "cargo test --quiet"]
        ),
        codex_output(ts=ts, call_id="call_s1", output='{"output":"ok","metadata":{"exit_code":0}}'),
        codex_call("exec_command", ts=ts, call_id="call_s2", cmd="pytest -x tests/"),
        codex_output(
            ts=ts, call_id="call_s2", output="Exit code: 1\nWall time: 1s\nOutput:\nfailed"
        ),
        codex_call("shell", ts=ts, call_id="call_s3", command=["ls", "-la"]),
        codex_output(ts=ts, call_id="call_s3", output="total 0"),
        codex_message("assistant", "This is blocked by the missing lexer tokens.", ts=ts),
        codex_tokens(None, ts=ts),
        codex_tokens(90_000, cumulative=200_000, ts=ts),
    ]
