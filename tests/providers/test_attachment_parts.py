"""A user message's attachments as each vendor's wire gets them (images as
image parts through pydantic-ai's BinaryContent, text inlined), what the
scripted model receives, and what the transcript keeps of them."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator

import pytest

from server.providers.base import Attachment, UserMessage
from server.providers.codec import message_from_dict, message_to_dict
from server.providers.scripted import ScriptedProvider, ScriptedTurn, parse_script
from tests.engine.attachments.images import image_bytes
from tests.fakes.script import Reply
from tests.fakes.vendors import FakeVendor
from tests.providers.test_adapters import KINDS, PATHS, adapter, stream

PNG = image_bytes()
IMAGE = Attachment("/home/me/shot.png", "image/png", PNG, path="/home/me/shot.png",
                   size=len(PNG), sha256="ab" * 32)
TEXT = Attachment("/home/me/notes.md", "text/plain",
                  b"[Attached file /home/me/notes.md (12 bytes)]\nremember milk\n",
                  path="/home/me/notes.md", size=12, sha256="cd" * 32)


@pytest.fixture
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor() as fake:
        yield fake


@pytest.mark.anyio
@pytest.mark.parametrize("kind", KINDS)
async def test_an_image_goes_as_an_image_part_and_text_inline(
    kind: str, vendor: FakeVendor
) -> None:
    vendor.script(Reply(text="A red square."))
    await stream(adapter(kind, vendor), UserMessage("what is this?", (IMAGE, TEXT)))
    body = vendor.last(PATHS[kind]).body
    wire = json.dumps(body)
    encoded = base64.b64encode(PNG).decode()
    assert encoded in wire and "image/png" in wire
    assert "remember milk" in wire and "what is this?" in wire
    # An image part of the vendor's own kind, not the bytes pasted into text.
    parts = {"anthropic": '"type": "image"', "openai": '"type": "input_image"',
             "openai-chat": '"type": "image_url"'}
    assert parts[kind] in wire


@pytest.mark.anyio
async def test_the_scripted_model_records_what_it_received() -> None:
    model = ScriptedProvider([ScriptedTurn(text="ok")], accepts_images=True)
    message = UserMessage("look", (IMAGE,))
    async with model:
        _ = [part async for part in model.stream([message], [])]
    assert model.received == [(message,)]
    assert model.received[0][0].attachments[0].data == PNG  # type: ignore[union-attr]


def test_a_script_says_whether_its_model_takes_images() -> None:
    from server.providers.scripted import ScriptError, script_accepts_images

    assert script_accepts_images({"turns": [], "images": True})
    assert not script_accepts_images({"turns": []})
    with pytest.raises(ScriptError, match='"images" must be true or false'):
        parse_script({"turns": [], "images": "yes"})


def test_the_transcript_keeps_path_size_and_hash_never_the_content() -> None:
    recorded = message_to_dict(UserMessage("look", (IMAGE, TEXT)))
    assert "remember milk" not in json.dumps(recorded)
    assert base64.b64encode(PNG).decode() not in json.dumps(recorded)
    assert recorded["attachments"][0] == {
        "name": "/home/me/shot.png", "media_type": "image/png", "path": "/home/me/shot.png",
        "size": len(PNG), "sha256": "ab" * 32, "sent_bytes": len(PNG),
        "sent_sha256": hashlib.sha256(PNG).hexdigest(),
    }
    back = message_from_dict(recorded)
    assert isinstance(back, UserMessage)
    assert message_to_dict(back) == recorded  # read back and written again: the same
    assert [(a.path, a.size, a.sha256, a.data) for a in back.attachments] == [
        ("/home/me/shot.png", len(PNG), "ab" * 32, b""),
        ("/home/me/notes.md", 12, "cd" * 32, b""),
    ]
