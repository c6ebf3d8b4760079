"""grep and glob: find text and paths across the workspace.

Both walk folders themselves, so both apply the same rules to every entry they
visit: paths the run may not read (``ctx.denied``) are left out entirely, noise
folders (.git, node_modules, …) are not entered unless named outright, symlinked
folders are never followed (a link can make a cycle or lead far away), and
symlinks that resolve outside the workspace are ignored. Special files (FIFOs,
sockets, devices) are skipped: reading one could block the worker forever."""

from __future__ import annotations

import re
import stat
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import anyio.to_thread

from server.engine.tools.base import Risk, ToolContext, ToolOutput, check_args, string_schema
from server.engine.tools.files import format_size, looks_binary

NOISE_FOLDERS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv"})

# A minified bundle can be one 2 MB line; the model needs only the neighbourhood.
_LINE_CUT = 300


@dataclass(frozen=True)
class _Entry:
    path: Path  # where the walk found it: for a symlink, the link itself
    rel: str  # workspace-relative posix path, as shown to the model
    is_dir: bool  # of the entry or, for a symlink, of its target
    is_link: bool
    noise: bool

    @property
    def enterable(self) -> bool:
        return self.is_dir and not self.is_link


def _in_workspace(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def _children(folder: Path, ctx: ToolContext) -> list[_Entry]:
    """The entries of ``folder`` a walk may see, sorted by name. ``folder`` lies
    lexically inside the workspace root (walks never enter symlinked folders)."""
    root = ctx.workspace.root
    try:
        names = sorted(child.name for child in folder.iterdir())
    except OSError:
        return []
    found = []
    own = ctx.workspace.own  # Sparrow's own folders: not the agent's to search
    for name in names:
        path = folder / name
        if path in own:
            continue
        rel = ctx.workspace.relative(path)
        try:
            info = path.lstat()
            is_link = stat.S_ISLNK(info.st_mode)
            if is_link:
                real = path.resolve(strict=True)
                if not _in_workspace(real, root) or ctx.denied(ctx.workspace.relative(real)):
                    continue
                info = real.stat()
        except (OSError, RuntimeError):  # vanished, dangling link, or a link loop
            continue
        is_dir = stat.S_ISDIR(info.st_mode)
        if not (is_dir or stat.S_ISREG(info.st_mode)) or ctx.denied(rel):
            continue
        found.append(_Entry(path, rel, is_dir, is_link, is_dir and name in NOISE_FOLDERS))
    return found


def _walk_files(folder: Path, ctx: ToolContext) -> Iterator[_Entry]:
    """Every file below ``folder`` that a walk may see, in no particular order."""
    pending = [folder]
    while pending:
        for entry in _children(pending.pop(), ctx):
            if entry.noise:
                continue
            if entry.enterable:
                pending.append(entry.path)
            elif not entry.is_dir:
                yield entry


def _cap(lines: list[str], total: int, limit: int, what: str) -> tuple[str, bool]:
    body = "\n".join(lines[:limit])
    if total > limit:
        return body + f"\n… {total - limit} more {what} not shown; narrow the search", True
    return body, False


# ---------------------------------------------------------------------- grep


class Grep:
    name = "grep"
    description = (
        "Search file contents with a Python regular expression, line by line, in one file "
        "or a folder and everything below it. Prints `path:line: text` for each match."
    )
    risk = Risk.READ_ONLY
    parameters = string_schema(
        {"pattern": "A Python regular expression, matched against each line."},
        {"path": "File or folder to search, relative to the workspace (default '.')."},
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        checked = check_args(self, args)
        pattern, path = checked["pattern"], checked.get("path") or "."
        if not pattern:
            return ToolOutput(False, "grep: the pattern is empty")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            return ToolOutput(False, f"grep: invalid regular expression {pattern!r}: {exc}")
        target = ctx.workspace.resolve(path)
        return await anyio.to_thread.run_sync(
            _Search(regex, ctx).run, target, path, abandon_on_cancel=True
        )


class _Search:
    """One grep call: the matches found so far and what was passed over."""

    def __init__(self, regex: re.Pattern[str], ctx: ToolContext) -> None:
        self.regex = regex
        self.ctx = ctx
        self.size_limit = ctx.settings.files.read_limit_bytes
        self.match_limit = ctx.settings.files.list_limit_entries
        self.lines: list[str] = []
        self.total = 0
        self.skipped: Counter[str] = Counter()

    def run(self, target: Path, shown: str) -> ToolOutput:
        if not target.exists():
            return ToolOutput(False, f"{shown}: no such file or folder")
        rel = self.ctx.workspace.relative(target)
        if rel != "." and self.ctx.denied(rel):
            return ToolOutput(False, f"{shown}: this run may not read it")
        if target.is_dir():
            for entry in sorted(_walk_files(target, self.ctx), key=lambda e: e.rel):
                self._search(entry.path, entry.rel)
        elif not target.is_file():
            return ToolOutput(False, f"{shown}: not a regular file")
        else:
            self._search(target, rel)
            # A lone file that was passed over is an answer the model should not misread.
            if self.skipped:
                reason = next(iter(self.skipped))
                return ToolOutput(False, f"{shown}: not searched ({reason})")
        return self._output()

    def _search(self, path: Path, rel: str) -> None:
        try:
            with path.open("rb") as handle:
                data = handle.read(self.size_limit + 1)
        except OSError:
            self.skipped["unreadable"] += 1
            return
        if len(data) > self.size_limit:
            self.skipped[f"larger than {format_size(self.size_limit)}"] += 1
            return
        if looks_binary(data):
            self.skipped["binary"] += 1
            return
        text = data.decode("utf-8", errors="replace")
        # split("\n"), not splitlines(): line numbers must agree with editors, which
        # do not break lines at form feeds or Unicode separators.
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        for number, raw in enumerate(lines, 1):
            line = raw.removesuffix("\r")
            if not self.regex.search(line):
                continue
            self.total += 1
            if len(self.lines) < self.match_limit:
                if len(line) > _LINE_CUT:
                    line = line[:_LINE_CUT] + "…"
                self.lines.append(f"{rel}:{number}: {line}")

    def _output(self) -> ToolOutput:
        note = ""
        if self.skipped:
            parts = (f"{count} {why}" for why, count in sorted(self.skipped.items()))
            note = f"\n[files not searched: {', '.join(parts)}]"
        if not self.total:
            return ToolOutput(True, "no matches" + note)
        body, cut = _cap(self.lines, self.total, self.match_limit, "matches")
        return ToolOutput(True, body + note, truncated=cut)


# ---------------------------------------------------------------------- glob


class Glob:
    name = "glob"
    description = (
        "Find files and folders of the workspace by a path pattern such as `src/**/*.py`: "
        "`*`, `?` and `[abc]` match within one name, `**` matches any number of folders. "
        "Folders end with '/'; a pattern ending with '/' finds only folders."
    )
    risk = Risk.READ_ONLY
    parameters = string_schema(
        {"pattern": "Path pattern relative to the workspace, with '/' between names."}
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        pattern = check_args(self, args)["pattern"].strip()
        problem = _pattern_problem(pattern)
        if problem:
            return ToolOutput(False, f"glob: {problem}")
        segments = [s for s in pattern.split("/") if s not in ("", ".")]
        folders_only = pattern.endswith("/")
        limit = ctx.settings.files.list_limit_entries
        found = await anyio.to_thread.run_sync(_glob, segments, ctx, abandon_on_cancel=True)
        shown = sorted(
            rel + "/" if is_dir else rel
            for rel, is_dir in found.items()
            if is_dir or not folders_only
        )
        if not shown:
            return ToolOutput(True, f"no matches for {pattern}")
        body, cut = _cap(shown, len(shown), limit, "entries")
        return ToolOutput(True, body, truncated=cut)


def _pattern_problem(pattern: str) -> str | None:
    if pattern.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", pattern):
        return f"{pattern!r} is absolute; give a pattern relative to the workspace"
    segments = [s for s in pattern.split("/") if s not in ("", ".")]
    if ".." in segments:
        return f"{pattern!r} climbs out with '..'; patterns stay inside the workspace"
    if not segments:
        return "the pattern is empty; for everything, use '**'"
    return None


def _is_wildcard(segment: str) -> bool:
    return any(c in segment for c in "*?[")


def _glob(segments: list[str], ctx: ToolContext) -> dict[str, bool]:
    """Workspace-relative paths matching ``segments`` (one per path level, ``**``
    for any number of folders), each with whether it is a folder."""
    found: dict[str, bool] = {}
    listed: dict[Path, list[_Entry]] = {}
    seen: set[tuple[Path, int]] = set()
    # (folder, index): the entries of folder are to be matched against segments[index:].
    pending = [(ctx.workspace.root, 0)]
    while pending:
        folder, index = pending.pop()
        if (folder, index) in seen:  # several `**` reach the same place
            continue
        seen.add((folder, index))
        if folder not in listed:
            listed[folder] = _children(folder, ctx)
        segment, last = segments[index], index == len(segments) - 1
        if segment == "**":
            if not last:
                pending.append((folder, index + 1))  # `**` as zero folders
            for entry in listed[folder]:
                if entry.noise:
                    continue
                if last:
                    found[entry.rel] = entry.is_dir
                if entry.enterable:
                    pending.append((entry.path, index))
            continue
        wildcard = _is_wildcard(segment)
        for entry in listed[folder]:
            # Noise folders are found by naming them, never by a wildcard.
            if (entry.noise and wildcard) or not fnmatchcase(entry.path.name, segment):
                continue
            if last:
                found[entry.rel] = entry.is_dir
            elif entry.enterable:
                pending.append((entry.path, index + 1))
    return found
