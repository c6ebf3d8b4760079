"""The conversation's messages as plain JSON objects, for the transcript
(``message_added``) and back, so that a conversation can be continued from
what was recorded. The inverse is exact for every field but an attachment's
bytes, which the transcript does not hold."""

from __future__ import annotations

from typing import Any

from server.providers.base import (
    AssistantMessage,
    Attachment,
    Message,
    Thinking,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)


class MessageDecodeError(ValueError):
    """A recorded message that is not one of the known shapes."""


def message_to_dict(message: Message) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        data: dict[str, Any] = {"role": "user", "text": message.text}
        if message.attachments:
            # By path, size and hash: the content stays where it was.
            data["attachments"] = [
                {
                    "name": a.name,
                    "media_type": a.media_type,
                    "path": a.path,
                    "size": a.size,
                    "sha256": a.sha256,
                    # Lets the request view show the content again while the file holds it.
                    "sent_bytes": a.sent()[0],
                    "sent_sha256": a.sent()[1],
                }
                for a in message.attachments
            ]
        return data
    if isinstance(message, AssistantMessage):
        data = {"role": "assistant", "text": message.text}
        if message.tool_calls:
            data["tool_calls"] = [
                {"id": c.id, "name": c.name, "args": c.args} for c in message.tool_calls
            ]
        if message.thinking:
            data["thinking"] = [
                {k: v for k, v in vars(t).items() if v is not None} for t in message.thinking
            ]
        return data
    return {
        "role": "tool",
        "call_id": message.call_id,
        "tool": message.tool,
        "content": message.content,
        "ok": message.ok,
    }


def _str(data: dict[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise MessageDecodeError(f"message field {key!r} must be a string")
    return value


def message_from_dict(data: object) -> Message:
    if not isinstance(data, dict):
        raise MessageDecodeError("a message must be an object")
    role = data.get("role")
    if role == "user":
        attachments = tuple(
            # The bytes are not recorded: the model is told a file was here.
            Attachment(
                _str(a, "name"),
                _str(a, "media_type"),
                b"",
                path=_str(a, "path", ""),
                size=a["size"] if isinstance(a.get("size"), int) else 0,
                sha256=_str(a, "sha256", ""),
                sent_bytes=a["sent_bytes"] if isinstance(a.get("sent_bytes"), int) else 0,
                sent_sha256=_str(a, "sent_sha256", ""),
            )
            for a in data.get("attachments", [])
            if isinstance(a, dict)
        )
        return UserMessage(_str(data, "text"), attachments)
    if role == "assistant":
        calls = []
        for raw in data.get("tool_calls", []):
            if not isinstance(raw, dict) or not isinstance(raw.get("args"), dict):
                raise MessageDecodeError("a tool call must be an object with args")
            calls.append(ToolCall(_str(raw, "id"), _str(raw, "name"), raw["args"]))
        thinking = []
        for raw in data.get("thinking", []):
            if not isinstance(raw, dict):
                raise MessageDecodeError("a thinking block must be an object")
            thinking.append(
                Thinking(
                    _str(raw, "text"),
                    signature=raw.get("signature"),
                    provider=raw.get("provider"),
                    id=raw.get("id"),
                )
            )
        return AssistantMessage(_str(data, "text"), tuple(calls), tuple(thinking))
    if role == "tool":
        ok = data.get("ok")
        if not isinstance(ok, bool):
            raise MessageDecodeError("a tool result needs ok: true or false")
        return ToolResultMessage(
            _str(data, "call_id"), _str(data, "tool"), _str(data, "content"), ok
        )
    raise MessageDecodeError(f"unknown message role {role!r}")
