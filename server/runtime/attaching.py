"""Attachments at the runtime's edge: what a surface asks to attach (paths,
upload ids) judged for the model that will get them, the same way for the
window's chips, ``sparrow run --attach`` and a run request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from server.core.paths import Paths
from server.core.redaction import redact
from server.core.settings import Settings
from server.engine.attachments import Prepared, prepare_refs
from server.engine.attachments.model import prepare
from server.engine.attachments.uploads import prune, save, uploads_dir
from server.providers.base import Attachment, Message, Provider, UserMessage
from server.providers.capabilities import accepts_images
from server.providers.codec import message_from_dict
from server.providers.scripted import script_accepts_images

MAX_ATTACHMENTS = 50


class AttachmentError(ValueError):
    """Attachments a run cannot take; the message says which and why."""


def images_for(model: str | None, script: object | None, settings: Settings) -> bool | None:
    """Whether ``model`` takes images; None while the model is not chosen
    ("auto", or a conversation's scripted model, whose script is gone)."""
    if model is None or model in ("auto", ""):
        return None
    if model == "demo":
        return False
    if model == "script":
        return script_accepts_images(script) if script is not None else None
    return accepts_images(model, settings.models)


def describe(
    refs: list[str], paths: Paths, settings: Settings, images: bool | None, model: str = ""
) -> list[Prepared]:
    _check_count(refs)
    return prepare_refs(
        refs,
        settings.attachments,
        state=paths.state,
        own=paths.own_folders(),
        accepts_images=images,
        model=model,
    )


def for_run(
    refs: list[str], paths: Paths, settings: Settings, provider: Provider
) -> tuple[Attachment, ...]:
    """What goes to ``provider`` with the task; AttachmentError naming every
    refused one (a run never starts with less than it was asked to take)."""
    if not refs:
        return ()
    images = bool(getattr(provider, "accepts_images", False))
    judged = describe(refs, paths, settings, images, provider.name)
    refused = [p for p in judged if p.attachment is None]
    if refused:
        raise AttachmentError(
            "cannot attach "
            + "; ".join(f"{p.path}: {p.reason}" for p in refused)
        )
    return tuple(p.attachment for p in judged if p.attachment is not None)


def _again(attachment: Attachment, paths: Paths, settings: Settings) -> Attachment | None:
    """What was sent, read again from the file; None when it no longer holds it."""
    if not attachment.path or not attachment.sent_sha256:
        return None
    inside_uploads = Path(attachment.path).is_relative_to(uploads_dir(paths.state))
    again = prepare(
        attachment.path, settings.attachments, accepts_images=True,
        own={} if inside_uploads else paths.own_folders(), shown=attachment.name,
    ).attachment
    if again is None or again.sent()[1] != attachment.sent_sha256:
        return None
    return again


def restore(
    messages: list[Message], paths: Paths, settings: Settings, provider: Provider
) -> list[Message]:
    """A conversation read back from its transcripts, with each attachment's
    content again where its file still holds what was sent, so a follow-up
    can still talk about it (the transcript itself keeps no content). An
    image stays out for a model that takes none (a follow-up may change model)."""
    images = bool(getattr(provider, "accepts_images", False))
    restored: list[Message] = []
    for message in messages:
        if isinstance(message, UserMessage) and any(not a.data for a in message.attachments):
            parts = tuple(
                a if a.data or (a.is_image and not images) else (_again(a, paths, settings) or a)
                for a in message.attachments
            )
            message = UserMessage(message.text, parts)
        restored.append(message)
    return restored


def as_sent(entry: dict[str, Any], paths: Paths, settings: Settings) -> dict[str, Any]:
    """A recorded attachment of a request, with the text the model got (redacted,
    as everything shown) while the file still holds what was sent."""
    recorded = message_from_dict({"role": "user", "text": "", "attachments": [entry]})
    assert isinstance(recorded, UserMessage) and len(recorded.attachments) == 1
    attachment = recorded.attachments[0]
    if not attachment.sent_sha256:
        return entry
    if attachment.is_image:
        return entry | {"text": None, "note": "an image part"}
    again = _again(attachment, paths, settings)
    if again is not None:
        return entry | {"text": redact(again.data.decode("utf-8", "replace"))}
    return entry | {
        "text": None,
        "note": "the file has changed or gone since it was sent (its content is not kept)",
    }


def store_upload(paths: Paths, settings: Settings, name: str, data: bytes) -> dict[str, object]:
    prune(paths.state, settings.attachments.upload_keep_hours)
    return save(paths.state, name, data).to_dict()


def _check_count(refs: list[str]) -> None:
    if len(refs) > MAX_ATTACHMENTS:
        raise AttachmentError(f"at most {MAX_ATTACHMENTS} attachments go with one message")
    for ref in refs:
        if not isinstance(ref, str) or not ref.strip():
            raise AttachmentError("each attachment must be a path or an upload id (a string)")


