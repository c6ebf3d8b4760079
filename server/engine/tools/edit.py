"""edit_file and delete_file: a targeted change to one text file, and the
removal of one file. Blocking I/O runs in a worker thread."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import anyio.to_thread

from server.engine.tools.base import Risk, ToolContext, ToolOutput, check_args, string_schema
from server.engine.tools.files import atomic_write, format_size, looks_binary


class EditFile:
    name = "edit_file"
    description = (
        "Replace one exact passage of a text file of the workspace. `old` must occur exactly "
        "once in the file (include surrounding lines to make it unique); `new` replaces it."
    )
    risk = Risk.MUTATING
    parameters = string_schema(
        {
            "path": "File path, relative to the workspace.",
            "old": "The exact text to replace, whitespace included; must occur exactly once.",
            "new": "The text to put in its place (may be empty to remove the passage).",
        }
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        checked = check_args(self, args)
        path = checked["path"]
        if not checked["old"]:
            return ToolOutput(
                False, f"{path}: `old` is empty; give the exact text to replace (or use write_file)"
            )
        target = ctx.workspace.resolve(path)
        return await anyio.to_thread.run_sync(
            self._edit,
            target,
            path,
            checked["old"],
            checked["new"],
            ctx.settings.files.read_limit_bytes,
        )

    @staticmethod
    def _edit(target: Path, shown: str, old: str, new: str, limit: int) -> ToolOutput:
        if not target.exists():
            return ToolOutput(False, f"{shown}: no such file")
        if target.is_dir():
            return ToolOutput(False, f"{shown}: is a folder")
        info = target.stat()
        if not stat.S_ISREG(info.st_mode):
            return ToolOutput(False, f"{shown}: not a regular file")
        # Read one byte past the limit rather than trusting the size: the file may grow.
        with target.open("rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            return ToolOutput(
                False,
                f"{shown}: too large to edit ({format_size(info.st_size)}; the limit is "
                f"{format_size(limit)}); use write_file or run_shell",
            )
        if looks_binary(data):
            return ToolOutput(False, f"{shown}: binary file; edit_file changes text files only")
        try:
            # Strict: replacing undecodable bytes would silently corrupt them on write.
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return ToolOutput(False, f"{shown}: not UTF-8 text; edit_file cannot change it safely")
        start = text.find(old)
        if start < 0:
            hint = ""
            if "\r\n" in text and "\n" in old and "\r\n" not in old:
                hint = " (the file has CRLF line endings; `old` has bare LF)"
            return ToolOutput(
                False, f"{shown}: `old` not found{hint}; read the file and copy the text exactly"
            )
        # Searching again from start + 1 also catches overlaps ("aa" in "aaa"), which
        # str.count misses: either of them could be the one meant.
        if text.find(old, start + 1) >= 0:
            count = max(text.count(old), 2)
            return ToolOutput(
                False,
                f"{shown}: `old` found {count} times; give more surrounding text so it is unique",
            )
        updated = text[:start] + new + text[start + len(old) :]
        atomic_write(target, updated.encode("utf-8"), stat.S_IMODE(info.st_mode))
        line = text.count("\n", 0, start) + 1
        removed = old.count("\n") + 1
        added = new.count("\n") + 1 if new else 0
        return ToolOutput(
            True, f"{shown}: replaced {removed} line(s) at line {line} with {added} line(s)"
        )


class DeleteFile:
    name = "delete_file"
    description = (
        "Delete one file of the workspace. Folders are refused; a symlink is removed "
        "itself, never the file it points to."
    )
    risk = Risk.DESTRUCTIVE
    parameters = string_schema({"path": "File path, relative to the workspace."})

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = check_args(self, args)["path"]
        name = Path(path).name
        if name in ("", ".", ".."):
            return ToolOutput(False, f"{path}: not a file path")
        # Resolve only the parent: resolving the whole path would follow a final symlink
        # and delete its target, which may be anywhere the link chose.
        parent = ctx.workspace.resolve(str(Path(path).parent))
        return await anyio.to_thread.run_sync(self._delete, parent / name, path)

    @staticmethod
    def _delete(target: Path, shown: str) -> ToolOutput:
        try:
            info = target.lstat()
        except FileNotFoundError:
            return ToolOutput(False, f"{shown}: no such file")
        except NotADirectoryError:
            return ToolOutput(False, f"{shown}: no such file (a parent is not a folder)")
        if stat.S_ISDIR(info.st_mode):
            return ToolOutput(False, f"{shown}: is a folder; delete_file removes single files only")
        if stat.S_ISLNK(info.st_mode):
            link_to = os.readlink(target)
            target.unlink()
            return ToolOutput(True, f"{shown}: symlink removed (its target {link_to} is untouched)")
        target.unlink()
        return ToolOutput(True, f"{shown}: deleted ({format_size(info.st_size)})")
