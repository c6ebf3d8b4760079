"""How a path given with a message is sent to the model, decided once, here,
for every surface (the window's chips, the CLI's ``--attach``, a run request):

- a text file: inlined, cut after ``[attachments] text_limit_chars`` with a
  notice the model reads and the chip shows;
- an image (PNG, JPEG, GIF, WebP, by content): an image part, to a model that
  takes images; refused, saying so, for one that does not;
- a folder: a listing of what is in it (bounded, without what git ignores);
- anything else (binary, unreadable, too large an image, inside Sparrow's own
  folders): refused, with the reason.
"""

from __future__ import annotations

import hashlib
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from server.core.settings import AttachmentSettings
from server.engine.attachments.listing import list_folder
from server.engine.attachments.sniff import SNIFF_BYTES, NotText, decode_text, image_type
from server.providers.base import Attachment

How = Literal["inline", "image", "listing", "refused"]
TEXT: Final = "text/plain"


class AttachmentRefused(ValueError):
    """An attachment a run cannot take; the message names it and says why."""


@dataclass(frozen=True)
class Prepared:
    """One path, judged: what the chip shows, and what the model gets (None when refused)."""

    path: str
    name: str
    size: int  # bytes of a file, entries of a folder's listing
    how: How
    label: str  # the chip's words: "inline", "inline, cut at 50,000 characters", ...
    reason: str = ""  # why it is refused
    cut: bool = False
    attachment: Attachment | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "name": self.name,
            "size": self.size,
            "how": self.how,
            "label": self.label,
            "reason": self.reason,
            "cut": self.cut,
        }


def _refused(path: str, name: str, size: int, reason: str) -> Prepared:
    return Prepared(path, name, size, "refused", f"refused: {reason}", reason)


def own_folder_of(path: Path, own: dict[Path, str]) -> str | None:
    for folder, what in own.items():
        if path == folder or path.is_relative_to(folder):
            return what
    return None


def prepare(
    raw: str,
    settings: AttachmentSettings,
    *,
    accepts_images: bool | None,
    own: dict[Path, str],
    model: str = "",
    shown: str = "",
) -> Prepared:
    """Judge one path. ``accepts_images`` None: the model is not chosen yet
    (an image is described as one; the run decides). ``own``: Sparrow's own
    folders, refused (an upload's folder is not passed here). ``shown``: what
    the model is told the file is, when not its path (an upload: where
    Sparrow's state folder keeps it is none of the model's business)."""
    given = Path(raw).expanduser()
    name = given.name or raw
    if not given.is_absolute():
        return _refused(raw, name, 0, "not an absolute path")
    try:
        path = given.resolve(strict=True)
        info = path.stat()
    except (OSError, RuntimeError):
        return _refused(str(given), name, 0, "not found")
    mine = own_folder_of(path, own)
    if mine is not None:
        return _refused(str(path), name, 0, f"inside {mine}, which is not the model's to read")
    if stat.S_ISDIR(info.st_mode):
        return _listing(path, name, settings, own)
    if not stat.S_ISREG(info.st_mode):
        return _refused(str(path), name, 0, "not a regular file or folder")
    try:
        size = info.st_size
        return _file(path, name, size, settings, accepts_images, model, shown or str(path))
    except OSError as exc:
        return _refused(str(path), name, info.st_size, f"cannot be read: {exc.strerror or exc}")


def _file(
    path: Path,
    name: str,
    size: int,
    settings: AttachmentSettings,
    accepts_images: bool | None,
    model: str,
    shown: str,
) -> Prepared:
    limit = settings.text_limit_chars
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
        media_type = image_type(head)
        if media_type is not None:
            return _image(path, name, size, media_type, settings, accepts_images, model, shown)
        # A character takes at most 4 bytes: this is enough for the limit, and bounded.
        data = head + handle.read(max(0, limit * 4 + 4 - len(head)))
    complete = len(data) >= size
    try:
        text = decode_text(data, complete=complete)
    except NotText as exc:
        return _refused(str(path), name, size, str(exc))
    cut = not complete or len(text) > limit
    header = f"[Attached file {shown} ({size:,} bytes)]"
    body = text[:limit]
    notice = (
        f"\n[Cut: only the first {limit:,} characters of this {size:,}-byte file are attached]"
        if cut
        else ""
    )
    sent = f"{header}\n{body}{notice}\n[End of {shown}]\n"
    # Of the bytes read: the whole file, unless it was cut (a huge file is never read whole).
    digest = hashlib.sha256(data).hexdigest()
    attachment = Attachment(
        shown, TEXT, sent.encode("utf-8"), path=str(path), size=size, sha256=digest
    )
    label = f"inline, cut at {limit:,} characters" if cut else "inline"
    return Prepared(str(path), name, size, "inline", label, cut=cut, attachment=attachment)


def _image(
    path: Path,
    name: str,
    size: int,
    media_type: str,
    settings: AttachmentSettings,
    accepts_images: bool | None,
    model: str,
    shown: str,
) -> Prepared:
    if accepts_images is False:
        who = model or "this model"
        return _refused(
            str(path), name, size,
            f"{who} does not take images (if it does, say so in [models] images)",
        )
    if size > settings.image_limit_bytes:
        return _refused(
            str(path), name, size,
            f"an image of {size:,} bytes, more than the {settings.image_limit_bytes:,} "
            "a model takes ([attachments] image_limit_bytes)",
        )
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    attachment = Attachment(shown, media_type, data, path=str(path), size=size, sha256=digest)
    return Prepared(str(path), name, size, "image", "image", attachment=attachment)


def _listing(
    path: Path, name: str, settings: AttachmentSettings, own: dict[Path, str]
) -> Prepared:
    # Sparrow's own folders inside are passed over, as the search tools do.
    listing = list_folder(path, settings.listing_limit_entries, own)
    count = len(listing.entries)
    lines = "\n".join(listing.entries)
    notice = (
        ""
        if listing.complete
        else f"\n[Cut: only the first {count:,} entries are listed ([attachments] "
        "listing_limit_entries)]"
    )
    sent = f"[Attached folder {path}: what is in it, without what git ignores]\n{lines}{notice}\n"
    data = sent.encode("utf-8")
    attachment = Attachment(
        str(path), TEXT, data, path=str(path), sha256=hashlib.sha256(data).hexdigest()
    )
    label = f"listing, {count:,} entries" if listing.complete else f"listing, cut at {count:,}"
    return Prepared(
        str(path), name or str(path), count, "listing", label,
        cut=not listing.complete, attachment=attachment,
    )
