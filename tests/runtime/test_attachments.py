"""Attachments through a real run: what the model receives, what the transcript
keeps (path, size, hash; never the content), the meter's attachments
category, the request view, and a refusal that stops the run from starting."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from server.core.events import ContextUpdated, MessageAdded
from server.core.paths import Paths
from server.engine.bus import EventBus
from server.engine.store import Store
from server.engine.transcript import BadLine, read_transcript
from server.providers.base import UserMessage
from server.providers.scripted import ScriptedProvider, ScriptedTurn
from server.runtime.runs import RunManager, RunRequest, RunRequestError
from tests.engine.attachments.images import image_bytes

pytestmark = pytest.mark.anyio


def manager(paths: Paths) -> RunManager:
    return RunManager(paths=paths, store=Store(paths.database), bus=EventBus())


async def test_the_model_gets_the_files_and_the_transcript_only_their_hashes(
    paths: Paths, workspace: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(
        "the launch code is BLUE-42\napi_key = sk-proj-abcdefghijklmnopqrstuvwxyz0123\n"
    )
    shot = tmp_path / "shot.png"
    shot.write_bytes(image_bytes())
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "app.py").write_text("x = 1\n")
    model = ScriptedProvider([ScriptedTurn(text="Seen.")], accepts_images=True)
    async with manager(paths) as runs:
        info = runs.start(RunRequest(
            str(workspace), "look at these", provider=model,
            attachments=[str(notes), str(shot), str(folder)],
        ))
        finished = await runs.wait(info.id)
        assert finished is not None and finished.status == "completed"
        first = model.received[0][0]
        assert isinstance(first, UserMessage) and first.text == "look at these"
        kinds = [(a.path, a.media_type) for a in first.attachments]
        assert kinds == [(str(notes), "text/plain"), (str(shot), "image/png"),
                         (str(folder), "text/plain")]
        assert b"BLUE-42" in first.attachments[0].data
        assert first.attachments[1].data == shot.read_bytes()
        assert b"app.py" in first.attachments[2].data

        transcript = Path(info.transcript).read_text()
        assert "BLUE-42" not in transcript and "app.py" not in transcript
        assert "sk-proj" not in transcript
        events = [e for e in read_transcript(Path(info.transcript)) if not isinstance(e, BadLine)]
        added = next(e for e in events if isinstance(e, MessageAdded))
        recorded = added.message["attachments"]
        assert recorded[0]["path"] == str(notes)
        assert recorded[0]["size"] == notes.stat().st_size
        assert recorded[0]["sha256"] == hashlib.sha256(notes.read_bytes()).hexdigest()
        meter = next(e for e in events if isinstance(e, ContextUpdated))
        assert meter.chars["attachments"] > notes.stat().st_size

        # The request view shows the text as sent (the file has not changed) ...
        sent = runs.request_of(info.id, 1)
        assert sent is not None
        shown = sent["messages"][0]["attachments"]
        assert "BLUE-42" in shown[0]["text"] and shown[1]["text"] is None
        # Redacted like everything shown (the model itself got the file as it is).
        assert "sk-proj-abcdefghij" not in shown[0]["text"] and "[redacted]" in shown[0]["text"]
        assert b"sk-proj-abcdefghij" in first.attachments[0].data
        # ... and says so when the file no longer holds it.
        notes.write_text("something else\n")
        again = runs.request_of(info.id, 1)
        assert again is not None
        assert again["messages"][0]["attachments"][0]["text"] is None
        assert "changed" in again["messages"][0]["attachments"][0]["note"]


async def test_a_run_with_a_refused_attachment_does_not_start(
    paths: Paths, workspace: Path, tmp_path: Path
) -> None:
    blob = tmp_path / "tool.bin"
    blob.write_bytes(b"\x00\x01\x02binary")
    shot = tmp_path / "shot.png"
    shot.write_bytes(image_bytes())
    async with manager(paths) as runs:
        with pytest.raises(RunRequestError, match=r"tool\.bin: a binary file \(it holds NUL"):
            runs.start(RunRequest(str(workspace), "x", provider=ScriptedProvider([]),
                                  attachments=[str(blob)]))
        with pytest.raises(RunRequestError, match="does not take images"):
            runs.start(RunRequest(str(workspace), "x", provider=ScriptedProvider([]),
                                  attachments=[str(shot)]))
        with pytest.raises(RunRequestError, match="inside Sparrow's own state folder"):
            runs.start(RunRequest(str(workspace), "x", provider=ScriptedProvider([]),
                                  attachments=[str(paths.database)]))
        assert runs.recent() == []


async def test_a_follow_up_still_has_what_was_attached_while_the_file_holds_it(
    paths: Paths, workspace: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("line three says: ship it\n")
    shot = tmp_path / "shot.png"
    shot.write_bytes(image_bytes())
    async with manager(paths) as runs:
        first = runs.start(RunRequest(
            str(workspace), "read these", attachments=[str(notes), str(shot)],
            provider=ScriptedProvider([ScriptedTurn(text="Read.")], accepts_images=True),
        ))
        await runs.wait(first.id)

        seeing = ScriptedProvider([ScriptedTurn(text="It says ship it.")], accepts_images=True)
        second = runs.start(RunRequest("", "what did line three say?",
                                       continue_from=first.id, provider=seeing))
        await runs.wait(second.id)
        earlier = seeing.received[0][0]
        assert isinstance(earlier, UserMessage)
        assert b"ship it" in earlier.attachments[0].data
        assert earlier.attachments[1].data == shot.read_bytes()

        # A model without images gets the image as a mention only; a changed
        # file is not sent again as if it were what was attached.
        notes.write_text("rewritten since\n")
        blind = ScriptedProvider([ScriptedTurn(text="?")])
        third = runs.start(RunRequest("", "and now?", continue_from=second.id, provider=blind))
        await runs.wait(third.id)
        earlier = blind.received[0][0]
        assert isinstance(earlier, UserMessage)
        assert [a.data for a in earlier.attachments] == [b"", b""]
