"""Files a browser hands over (a drop, a pasted image): a plain browser has no
path to give, so the bytes are stored under the state folder, each upload in
a folder of its own named by a random id, and attached by that id. Old ones
are deleted at the next upload."""

from __future__ import annotations

import re
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

UPLOAD_PREFIX: Final = "upload:"
_ID = re.compile(r"^u[0-9a-f]{20}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")
MAX_NAME: Final = 120


class UploadError(ValueError):
    """An upload that cannot be stored or found; the message says why."""


@dataclass(frozen=True)
class Upload:
    id: str
    name: str
    path: Path
    size: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "ref": UPLOAD_PREFIX + self.id, "name": self.name,
                "size": self.size}


def safe_name(raw: str) -> str:
    """A file name that stays one name in one folder: the last part of
    whatever path was sent, with anything unusual replaced."""
    last = raw.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _UNSAFE.sub("_", last).strip(" .")
    return cleaned[:MAX_NAME] or "upload"


def uploads_dir(state: Path) -> Path:
    return state / "uploads"


def save(state: Path, name: str, data: bytes) -> Upload:
    upload_id = "u" + secrets.token_hex(10)
    folder = uploads_dir(state) / upload_id
    folder.mkdir(parents=True, exist_ok=False)
    path = folder / safe_name(name)
    path.write_bytes(data)
    return Upload(upload_id, path.name, path, len(data))


def find(state: Path, upload_id: str) -> Path:
    """The stored file of ``upload_id``; UploadError when there is none."""
    if not _ID.match(upload_id):
        raise UploadError(f"not an upload id: {upload_id!r}")
    folder = uploads_dir(state) / upload_id
    files = sorted(folder.iterdir()) if folder.is_dir() else []
    if len(files) != 1 or not files[0].is_file():
        raise UploadError(
            f"no such upload: {upload_id} (uploads are kept for a while, then deleted)"
        )
    return files[0]


def prune(state: Path, keep_hours: float, now: float | None = None) -> int:
    """Delete uploads older than ``keep_hours``; how many went."""
    root = uploads_dir(state)
    if not root.is_dir():
        return 0
    cutoff = (time.time() if now is None else now) - keep_hours * 3600
    gone = 0
    for folder in root.iterdir():
        try:
            if _ID.match(folder.name) and folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder)
                gone += 1
        except OSError:
            continue  # another process pruned it, or it is in use: next time
    return gone
