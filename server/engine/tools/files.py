"""The file tools: read_file, list_dir, write_file. Paths are relative to the
workspace; blocking I/O runs in a worker thread so the engine keeps streaming."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

import anyio.to_thread

from server.core import formatting
from server.engine.tools.base import Risk, ToolContext, ToolOutput, check_args, string_schema

# How much of a file's start is looked at to tell binary from text (as git does).
_BINARY_SNIFF = 8192


def looks_binary(head: bytes) -> bool:
    """Whether bytes from a file's start belong to a binary file: a NUL in the first 8 KB."""
    return b"\x00" in head[:_BINARY_SNIFF]


def atomic_write(target: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` beside ``target`` and rename it over: a crash never leaves half a
    file. ``mode`` (permission bits) is applied before the rename, so it is never lost."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".sparrow-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


format_size = formatting.size


class ReadFile:
    name = "read_file"
    description = (
        "Read a text file of the workspace. A long file is shown in part, with the line "
        "range shown and where to go on: read the rest with offset (the first line to "
        "show, from 1) and limit (how many lines)."
    )
    risk = Risk.READ_ONLY
    parameters = string_schema({"path": "File path, relative to the workspace."})
    parameters["properties"] |= {
        "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1)."},
        "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show."},
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        checked = check_args(self, args)
        path = checked["path"]
        target = ctx.workspace.resolve(path)
        return await anyio.to_thread.run_sync(
            self._read,
            target,
            path,
            ctx.settings.files.read_limit_bytes,
            checked.get("offset"),
            checked.get("limit"),
        )

    @staticmethod
    def _read(
        target: Path, shown: str, limit: int, offset: int | None, lines: int | None
    ) -> ToolOutput:
        if not target.exists():
            return ToolOutput(False, f"{shown}: no such file")
        if target.is_dir():
            return ToolOutput(False, f"{shown}: is a folder; use list_dir")
        size = target.stat().st_size
        with target.open("rb") as handle:
            head = handle.read(limit + 1)
            if looks_binary(head):
                return ToolOutput(
                    True, f"{shown}: binary file, {format_size(size)}; contents not shown"
                )
            if offset is None and lines is None and len(head) <= limit:
                return ToolOutput(True, head.decode("utf-8", errors="replace"))
            handle.seek(0)
            return _read_lines(handle, shown, size, limit, offset or 1, lines)


def _read_lines(
    handle: BinaryIO, shown: str, size: int, limit: int, first: int, count: int | None
) -> ToolOutput:
    """Lines ``first`` on (as many as ``count`` and ``limit`` bytes allow), with
    the range shown and how to read on, so that a long file can be read in parts."""
    taken: list[bytes] = []
    used = 0
    number = 0
    more = False
    for number, line in enumerate(handle, start=1):
        if number < first:
            continue
        if (count is not None and len(taken) >= count) or used + len(line) > limit:
            more = True
            if not taken:  # one line longer than the limit (minified code): its start
                head = line[:limit].decode("utf-8", errors="replace")
                return ToolOutput(
                    True,
                    f"{head}\n… [line {number:,} is {format_size(len(line))}: only its first "
                    f"{format_size(limit)} shown]",
                    truncated=True,
                )
            break
        taken.append(line)
        used += len(line)
    if not taken:
        return ToolOutput(False, f"{shown}: has {number:,} lines; offset {first:,} is past the end")
    last = first + len(taken) - 1
    text = b"".join(taken).decode("utf-8", errors="replace")
    text += "" if text.endswith("\n") else "\n"
    if not more:
        end = f"… [lines {first:,} to {last:,}: the end of the file]" if first > 1 else ""
        return ToolOutput(True, text + end)
    return ToolOutput(
        True,
        f"{text}… [lines {first:,} to {last:,} of a {format_size(size)} file shown; "
        f"read on with offset={last + 1}]",
        truncated=True,
    )


class ListDir:
    name = "list_dir"
    description = "List a folder of the workspace: folders end with '/', files show their size."
    risk = Risk.READ_ONLY
    parameters = string_schema(
        {"path": "Folder path, relative to the workspace ('.' for its root)."}
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = check_args(self, args)["path"]
        target = ctx.workspace.resolve(path)
        limit = ctx.settings.files.list_limit_entries
        return await anyio.to_thread.run_sync(
            self._list, target, path, limit, frozenset(ctx.workspace.own)
        )

    @staticmethod
    def _list(target: Path, shown: str, limit: int, own: frozenset[Path]) -> ToolOutput:
        if not target.exists():
            return ToolOutput(False, f"{shown}: no such folder")
        if not target.is_dir():
            return ToolOutput(False, f"{shown}: is a file; use read_file")
        lines = []
        with os.scandir(target) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if own and Path(entry.path) in own:
                    continue  # Sparrow's own folder (the home folder as the workspace)
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    lines.append(f"{entry.name}/")
                else:
                    lines.append(f"{entry.name}  {format_size(info.st_size)}")
        if not lines:
            return ToolOutput(True, f"{shown}: empty folder")
        cut = len(lines) > limit
        body = "\n".join(lines[:limit])
        if cut:
            body += f"\n… [{len(lines) - limit} more entries not shown]"
        return ToolOutput(True, body, truncated=cut)


class WriteFile:
    name = "write_file"
    description = "Create or replace a file of the workspace with the given content."
    risk = Risk.MUTATING
    parameters = string_schema(
        {"path": "File path, relative to the workspace.", "content": "The whole new content."}
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        checked = check_args(self, args)
        target = ctx.workspace.resolve(checked["path"])
        return await anyio.to_thread.run_sync(
            self._write, target, checked["path"], checked["content"]
        )

    @staticmethod
    def _write(target: Path, shown: str, content: str) -> ToolOutput:
        if target.is_dir():
            return ToolOutput(False, f"{shown}: is a folder")
        data = content.encode("utf-8")
        existed = target.exists()
        mode = stat.S_IMODE(target.stat().st_mode) if existed else None
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data, mode)
        verb = "replaced" if existed else "created"
        return ToolOutput(True, f"{shown}: {verb}, {format_size(len(data))}")
