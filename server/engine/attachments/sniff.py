"""What a file's first bytes say it is: an image a model can read, text, or
neither. The content decides, never the name: a ``.png`` that is text is
text, a photo saved as ``.txt`` is an image."""

from __future__ import annotations

import codecs
from typing import Final

# Every image type the vendors take, by its signature.
_SIGNATURES: Final = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
SNIFF_BYTES: Final = 8192  # a NUL in here makes a file binary (as git decides)


def image_type(head: bytes) -> str | None:
    """The media type of an image the models take, from the file's first bytes."""
    for signature, media_type in _SIGNATURES:
        if head.startswith(signature):
            return media_type
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


class NotText(ValueError):
    """Bytes that are not text a model can read; the message says why."""


def decode_text(data: bytes, *, complete: bool) -> str:
    """``data`` as UTF-8 text. ``complete`` False: ``data`` is a file's first
    part, which may end inside a character (that tail is dropped)."""
    if b"\x00" in data[:SNIFF_BYTES]:
        raise NotText("a binary file (it holds NUL bytes)")
    decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
    try:
        return decoder.decode(data, final=complete)
    except UnicodeDecodeError as exc:
        raise NotText(
            f"not UTF-8 text (an undecodable byte at offset {exc.start}): a binary file"
        ) from exc
