"""The web UI's files, answered from memory, a stylesheet of imports with them inlined.

The page is some fifty small files, all fetched at once when the window
opens. Starlette's StaticFiles hands each request to a worker thread twice
(to look the file up, then to read it); in the window, where the GUI thread
and the server's start-up hold the GIL in turn, each hand-over waits, and the
files took ~3 ms each. Here a file is looked up and read on the event loop the
first time it is asked for (a few KB), then kept: a later request costs a
``stat`` of what it was made of, which also notices an edit. Starlette still
decides what may be served: its own lookup finds every file, and anything
that is not a regular file (a 404, a directory's redirect) goes to
StaticFiles as before.

A stylesheet made only of ``@import url("NAME.css");`` lines (``css/app.css``)
is answered with those sheets in its place, in order: what the browser would
build from the imports, in one response instead of one per sheet, which the
page's scripts would wait for. There is no build step: the file on disk is
valid CSS that any server can serve as it is. Anything else in it (a media
query on an import, a rule, a sheet that is not there) and it is served as it
is, for the browser to resolve.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
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
_COMMENT = re.compile(rb"/\*.*?\*/", re.DOTALL)
_IMPORT = re.compile(rb'@import\s+url\("([A-Za-z0-9_-]+\.css)"\)\s*;')

Stamp = tuple[int, int]  # (mtime_ns, size) of a file when it was read
_Read = tuple[str, os.stat_result, bytes]  # a file's full path, stat and bytes


@dataclass(frozen=True)
class _Kept:
    parts: tuple[tuple[str, Stamp], ...]  # the files it was made of, as read
    body: bytes
    headers: dict[str, str]


def imports_of(sheet: bytes) -> list[str] | None:
    """The sheet names a stylesheet of only ``@import url("NAME.css");`` lines
    imports, in order; None if it holds anything else (or no import)."""
    names: list[str] = []
    for line in _COMMENT.sub(b"", sheet).splitlines():
        line = line.strip()
        if not line:
            continue
        found = _IMPORT.fullmatch(line)
        if found is None:
            return None
        names.append(found.group(1).decode())
    return names or None


def _stamp(found: os.stat_result) -> Stamp:
    return (found.st_mtime_ns, found.st_size)


def _response(full_path: str, body: bytes, files: list[_Read]) -> _Kept:
    """What a request is answered with, made of ``files`` (as they were read)."""
    parts = tuple((path, _stamp(found)) for path, found, _ in files)
    tag = hashlib.md5(repr(parts).encode(), usedforsecurity=False).hexdigest()
    media_type = mimetypes.guess_type(full_path)[0] or "text/plain"
    if media_type.startswith("text/"):
        media_type += "; charset=utf-8"
    newest = max(found.st_mtime for _, found, _ in files)
    headers = {
        "content-type": media_type,
        "etag": f'"{tag}"',
        "last-modified": formatdate(newest, usegmt=True),
        **SECURITY_HEADERS,
    }
    return _Kept(parts, body, headers)


class UIFiles(StaticFiles):
    """The UI directory (``index.html`` at ``/``), kept in memory once asked for."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory=directory, html=True)
        self._kept: dict[str, _Kept] = {}

    def _file(self, path: str) -> _Read | None:
        """A regular file of the folder as StaticFiles' lookup finds it, and its bytes."""
        try:
            full_path, found = self.lookup_path(path)
            if found is None or not stat.S_ISREG(found.st_mode):
                return None
            with open(full_path, "rb") as file:
                return full_path, found, file.read()
        except (OSError, ValueError):
            return None  # StaticFiles answers it, as it would have

    def _find(self, path: str) -> _Kept | None:
        read = self._file(INDEX if path == ROOT else path)
        if read is None:
            return None
        names = imports_of(read[2]) if read[0].endswith(".css") else None
        if names is not None:
            folder = os.path.dirname(path)  # as StaticFiles.get_path made it
            sheets = [self._file(os.path.join(folder, name)) for name in names]
            found = [sheet for sheet in sheets if sheet is not None]
            if len(found) == len(names):
                body = b"".join(
                    b"/* " + name.encode() + b" */\n" + sheet[2] + b"\n"
                    for name, sheet in zip(names, found, strict=True)
                )
                return _response(read[0], body, [read, *found])
        return _response(read[0], read[2], [read])

    def _unchanged(self, kept: _Kept) -> bool:
        try:
            return all(_stamp(os.stat(part)) == stamp for part, stamp in kept.parts)
        except OSError:
            return False

    def _fresh(self, path: str) -> _Kept | None:
        kept = self._kept.get(path)
        if kept is None or not self._unchanged(kept):
            kept = self._find(path)  # first asked for, edited or gone since
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
