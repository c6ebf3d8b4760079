"""Files and folders given with a message: how each is sent (model.py), what
a browser uploads (uploads.py), and the refs a request names them by."""

from __future__ import annotations

from pathlib import Path

from server.core.settings import AttachmentSettings
from server.engine.attachments.model import AttachmentRefused, Prepared, prepare
from server.engine.attachments.uploads import UPLOAD_PREFIX, UploadError, find

__all__ = ["AttachmentRefused", "Prepared", "prepare", "prepare_refs"]


def prepare_refs(
    refs: list[str],
    settings: AttachmentSettings,
    *,
    state: Path,
    own: dict[Path, str],
    accepts_images: bool | None,
    model: str = "",
) -> list[Prepared]:
    """Each ref judged: an absolute path (a desktop drop, ``--attach``), or
    ``upload:ID`` (a browser's upload, which lives in Sparrow's own state
    folder and so is not refused for it)."""
    judged = []
    for ref in refs:
        if ref.startswith(UPLOAD_PREFIX):
            try:
                path = find(state, ref.removeprefix(UPLOAD_PREFIX))
            except UploadError as exc:
                judged.append(
                    Prepared(ref, ref, 0, "refused", f"refused: {exc}", str(exc))
                )
                continue
            judged.append(prepare(str(path), settings, accepts_images=accepts_images,
                                  own={}, model=model, shown=f"{path.name} (uploaded)"))
        else:
            judged.append(prepare(ref, settings, accepts_images=accepts_images, own=own,
                                  model=model))
    return judged


def accepted(judged: list[Prepared]) -> tuple[list[Prepared], list[Prepared]]:
    """The ones that go, and the ones refused."""
    return [p for p in judged if p.how != "refused"], [p for p in judged if p.how == "refused"]
