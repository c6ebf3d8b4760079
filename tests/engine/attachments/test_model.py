"""How a path is sent: real files and folders, a real git repository for what
it ignores, Sparrow's real own folders."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pygit2
import pytest

from server.core.paths import Paths
from server.core.settings import AttachmentSettings
from server.engine.attachments import Prepared, prepare
from server.engine.attachments.sniff import image_type
from tests.engine.attachments.images import image_bytes

SETTINGS = AttachmentSettings(text_limit_chars=100, listing_limit_entries=5)


def judge(
    path: Path,
    images: bool | None = True,
    own: dict[Path, str] | None = None,
    settings: AttachmentSettings = SETTINGS,
) -> Prepared:
    return prepare(str(path), settings, accepts_images=images, own=own or {}, model="m:x")


def sent_text(prepared: Prepared) -> str:
    assert prepared.attachment is not None
    return str(prepared.attachment.data.decode())


def test_a_short_text_file_is_inlined_whole_with_its_path_size_and_hash(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("héllo\nworld\n")
    judged = judge(note)
    assert (judged.how, judged.label, judged.cut) == ("inline", "inline", False)
    assert judged.size == note.stat().st_size
    text = sent_text(judged)
    assert "héllo\nworld\n" in text and str(note) in text and "Cut" not in text
    assert judged.attachment is not None
    assert judged.attachment.sha256 == hashlib.sha256(note.read_bytes()).hexdigest()
    assert judged.attachment.path == str(note) and judged.attachment.media_type == "text/plain"


def test_a_long_text_file_is_cut_at_the_limit_with_a_notice_the_model_reads(tmp_path: Path) -> None:
    long = tmp_path / "long.txt"
    long.write_text("ab" * 5_000)
    judged = judge(long)
    assert judged.cut and judged.label == "inline, cut at 100 characters"
    text = sent_text(judged)
    assert "ab" * 50 in text and "ab" * 51 not in text
    assert "[Cut: only the first 100 characters of this 10,000-byte file are attached]" in text


def test_a_huge_file_is_read_only_as_far_as_the_cap(tmp_path: Path) -> None:
    huge = tmp_path / "huge.log"
    with huge.open("wb") as handle:  # sparse: 2 GB on paper, nothing on disk
        handle.write(b"line\n" * 4_000)
        handle.truncate(2 * 1024**3)
    judged = prepare(str(huge), SETTINGS, accepts_images=True, own={})
    # The tail is NUL bytes, but only the head (under the cap) was read: text.
    assert judged.how == "inline" and judged.cut
    assert len(sent_text(judged)) < 1_000
    assert judged.attachment is not None  # the hash is of what was read, not of 2 GB
    assert judged.attachment.sha256 == hashlib.sha256((b"line\n" * 4_000)[:8192]).hexdigest()


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"\x7fELF\x02\x01\x01\x00\x00\x00binary", "NUL bytes"),
        (b"caf\xe9 au lait, in Latin-1", "not UTF-8"),
    ],
)
def test_a_binary_file_is_refused_with_the_reason(tmp_path: Path, content: bytes, why: str) -> None:
    blob = tmp_path / "program"
    blob.write_bytes(content)
    judged = judge(blob)
    assert judged.how == "refused" and judged.attachment is None
    assert why in judged.reason and judged.label.startswith("refused: ")


@pytest.mark.parametrize(
    ("kind", "media_type"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_images_are_told_by_their_content_not_their_name(
    tmp_path: Path, kind: str, media_type: str
) -> None:
    data = image_bytes(kind)
    assert image_type(data) == media_type
    misnamed = tmp_path / "photo.txt"
    misnamed.write_bytes(data)
    judged = judge(misnamed)
    assert (judged.how, judged.label) == ("image", "image")
    assert judged.attachment is not None
    assert judged.attachment.media_type == media_type and judged.attachment.data == data


def test_a_text_file_named_png_is_text(tmp_path: Path) -> None:
    fake = tmp_path / "diagram.png"
    fake.write_text("not a picture at all")
    assert judge(fake).how == "inline"


def test_an_image_is_refused_for_a_model_that_takes_none_and_described_before_the_choice(
    tmp_path: Path,
) -> None:
    picture = tmp_path / "shot.png"
    picture.write_bytes(image_bytes())
    refused = judge(picture, images=False)
    assert refused.how == "refused" and "m:x does not take images" in refused.reason
    assert "[models] images" in refused.reason
    assert judge(picture, images=None).how == "image"


def test_an_image_over_its_limit_is_refused(tmp_path: Path) -> None:
    picture = tmp_path / "big.png"
    picture.write_bytes(image_bytes(size=(300, 300)))
    small = AttachmentSettings(image_limit_bytes=100)
    judged = judge(picture, settings=small)
    assert judged.how == "refused" and "image_limit_bytes" in judged.reason


def test_a_folder_is_a_bounded_listing_without_what_git_ignores(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print(1)\n")
    (project / "README.md").write_text("hi\n")
    (project / "build").mkdir()
    (project / "build" / "out.bin").write_bytes(b"\x00")
    (project / "debug.log").write_text("noise\n")
    (project / ".gitignore").write_text("build/\n*.log\n")
    pygit2.init_repository(str(project))
    judged = judge(project, settings=AttachmentSettings(listing_limit_entries=50))
    assert judged.how == "listing" and not judged.cut
    text = sent_text(judged)
    listed = text.splitlines()[1:]
    assert listed == [".gitignore", "README.md", "src/", "src/main.py"]
    assert judged.label == "listing, 4 entries"

    cut = judge(project, settings=AttachmentSettings(listing_limit_entries=2))
    assert cut.cut and cut.label == "listing, cut at 2"
    assert "listing_limit_entries" in sent_text(cut)


def test_paths_in_sparrows_own_folders_are_refused(tmp_path: Path, paths: Paths) -> None:
    secret = paths.state / "sessions-notes.txt"
    secret.write_text("what Sparrow keeps\n")
    judged = judge(secret, own=paths.own_folders())
    assert judged.how == "refused" and "Sparrow's own state folder" in judged.reason
    # Nor by a symlink from outside, nor as part of a folder's listing.
    link = tmp_path / "innocent.txt"
    link.symlink_to(secret)
    assert judge(link, own=paths.own_folders()).how == "refused"
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "mine.txt").write_text("x")
    (outer / "state-link").symlink_to(paths.state, target_is_directory=True)
    listed = sent_text(judge(outer, own=paths.own_folders()))
    assert "mine.txt" in listed and "state-link" not in listed


def test_missing_and_relative_paths_are_refused(tmp_path: Path) -> None:
    assert judge(tmp_path / "nope.txt").reason == "not found"
    assert prepare("notes.txt", SETTINGS, accepts_images=True, own={}).reason == (
        "not an absolute path"
    )
