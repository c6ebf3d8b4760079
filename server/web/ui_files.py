"""The web UI's files, answered from memory.

The page is some seventy small files, all fetched at once when the window
opens. Starlette's StaticFiles hands each request to a worker thread twice
(to look the file up, then to read it); in the window, where the GUI thread
and the server's start-up hold the GIL in turn, each hand-over waits, and the
files took ~3 ms each. Here a file is looked up and read on the event loop the
first time it is asked for (a few KB), then kept: a later request costs one
``stat``, which also notices a file edited since. Starlette still decides what
may be served: its own lookup finds the file, and anything that is not a
regular file (a 404, a directory's redirect) goes to StaticFiles as before.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import stat
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.staticfiles import NotModifiedResponse, StaticFiles

# The UI changes with each update of the app: never run yesterday's JS.
SECURITY_HEADERS = {
    "cache-control": "no-cache",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}
INDEX = "index.html"
ROOT = "."  # what StaticFiles.get_path makes of "/"


@dataclass(frozen=True)
class _Kept:
    full_path: str
    stamp: tuple[int, int]  # (mtime_ns, size) when read
    body: bytes
    headers: dict[str, str]


def _read(full_path: str, found: os.stat_result) -> _Kept:
    with open(full_path, "rb") as file:
        body = file.read()
    stamp = (found.st_mtime_ns, len(body))
    tag = hashlib.md5(f"{stamp[0]}-{stamp[1]}".encode(), usedforsecurity=False).hexdigest()
    media_type = mimetypes.guess_type(full_path)[0] or "text/plain"
    if media_type.startswith("text/"):
        media_type += "; charset=utf-8"
    headers = {
        "content-type": media_type,
        "etag": f'"{tag}"',
        "last-modified": formatdate(found.st_mtime, usegmt=True),
        **SECURITY_HEADERS,
    }
    return _Kept(full_path, stamp, body, headers)


class UIFiles(StaticFiles):
    """The UI directory (``index.html`` at ``/``), kept in memory once asked for."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory=directory, html=True)
        self._kept: dict[str, _Kept] = {}

    def _find(self, path: str) -> _Kept | None:
        try:
            full_path, found = self.lookup_path(INDEX if path == ROOT else path)
            if found is None or not stat.S_ISREG(found.st_mode):
                return None
            return _read(full_path, found)
        except (OSError, ValueError):
            return None  # StaticFiles answers it, as it would have

    def _fresh(self, path: str) -> _Kept | None:
        kept = self._kept.get(path)
        if kept is None:
            kept = self._find(path)
        else:
            try:
                found = os.stat(kept.full_path)
            except OSError:
                kept = None  # gone: StaticFiles answers (a 404)
            else:
                if (found.st_mtime_ns, found.st_size) != kept.stamp:
                    kept = self._find(path)  # edited since
        if kept is None:
            self._kept.pop(path, None)
        else:
            self._kept[path] = kept
        return kept

    async def get_response(self, path: str, scope: Any) -> Response:
        kept = self._fresh(path) if scope["method"] in ("GET", "HEAD") else None
        if kept is None:
            response = await super().get_response(path, scope)
            response.headers.update(SECURITY_HEADERS)
            return response
        if self.is_not_modified(Headers(kept.headers), Headers(scope=scope)):
            return NotModifiedResponse(Headers(kept.headers))
        return Response(kept.body, headers=kept.headers)
