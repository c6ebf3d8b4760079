"""Where the tools write their transcripts, and which files are transcripts.

Claude Code: ``<config>/projects/<escaped-cwd>/<session-id>.jsonl``, subagents in
``<session-id>/subagents/agent-<id>.jsonl`` (some versions: ``agent-<id>.jsonl``
next to the session); ``<config>`` is each folder of ``$CLAUDE_CONFIG_DIR``
(comma-separated) or else ``~/.claude`` and ``~/.config/claude``.
Codex: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``, ``~/.codex`` by default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping

from server.monitor.state import CLAUDE_CODE, CODEX

CLAUDE_CONFIG_ENV = "CLAUDE_CONFIG_DIR"
CODEX_HOME_ENV = "CODEX_HOME"
_UUID_TAIL = re.compile(
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"
)


class Root:
    """A folder holding one tool's transcripts: Claude's ``projects``, Codex's ``sessions``."""

    __slots__ = ("path", "tool")

    def __init__(self, tool: str, path: str) -> None:
        self.tool = tool
        self.path = path

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Root) and (self.tool, self.path) == (other.tool, other.path)

    def __hash__(self) -> int:
        return hash((self.tool, self.path))

    def __repr__(self) -> str:
        return f"Root({self.tool!r}, {self.path!r})"


class FileInfo:
    """What a transcript's place says about it."""

    __slots__ = ("parent_session", "project_hint", "session_id", "subagent", "tool")

    def __init__(
        self,
        tool: str,
        session_id: str,
        parent_session: str | None = None,
        subagent: bool = False,
        project_hint: str = "",
    ) -> None:
        self.tool = tool
        self.session_id = session_id
        self.parent_session = parent_session
        self.subagent = subagent
        self.project_hint = project_hint  # Claude's escaped folder name, until a line says the cwd


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def claude_config_dirs(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    listed = [p.strip() for p in env.get(CLAUDE_CONFIG_ENV, "").split(",") if p.strip()]
    if listed:
        return _unique([os.path.abspath(os.path.expanduser(p)) for p in listed])
    home = _home(env)
    return _unique([os.path.join(home, ".claude"), os.path.join(home, ".config", "claude")])


def codex_homes(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    configured = env.get(CODEX_HOME_ENV, "").strip()
    if configured:
        return [os.path.abspath(os.path.expanduser(configured))]
    return [os.path.join(_home(env), ".codex")]


def session_roots(env: Mapping[str, str] | None = None) -> list[Root]:
    """Every folder to watch, existing or not yet (a tool may be installed later)."""
    roots = [Root(CLAUDE_CODE, os.path.join(d, "projects")) for d in claude_config_dirs(env)]
    roots += [Root(CODEX, os.path.join(d, "sessions")) for d in codex_homes(env)]
    seen: set[str] = set()
    unique = []
    for root in roots:
        real = os.path.realpath(root.path)  # ~/.config/claude may be a link to ~/.claude
        if real not in seen:
            seen.add(real)
            unique.append(root)
    return unique


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def descend(tool: str, parts: tuple[str, ...]) -> bool:
    """Whether the folder at ``parts`` (relative to a root) may hold transcripts."""
    if tool == CLAUDE_CODE:
        # projects/<proj>/<session>/subagents/ — not tool-results/ and the like.
        return len(parts) <= 2 or (len(parts) == 3 and parts[2] == "subagents")
    return len(parts) <= 3  # sessions/YYYY/MM/DD/


def describe(tool: str, parts: tuple[str, ...]) -> FileInfo | None:
    """The file at ``parts`` (relative to a root) if it is a transcript, else None."""
    name = parts[-1]
    if not name.endswith(".jsonl"):
        return None
    stem = name[: -len(".jsonl")]
    if tool == CLAUDE_CODE:
        if len(parts) == 2:
            if stem.startswith("agent-"):
                return FileInfo(tool, stem, subagent=True, project_hint=parts[0])
            return FileInfo(tool, stem, project_hint=parts[0])
        if len(parts) == 4 and parts[2] == "subagents":
            return FileInfo(
                tool, stem, parent_session=parts[1], subagent=True, project_hint=parts[0]
            )
        return None
    if len(parts) == 4 and stem.startswith("rollout-"):
        match = _UUID_TAIL.search(stem)
        return FileInfo(tool, match.group(1) if match else stem)
    return None


def describe_path(path: str, roots: list[Root] | None = None) -> tuple[Root, FileInfo] | None:
    """The root and description of a transcript given by its path, if it is one."""
    full = os.path.abspath(path)
    for root in roots if roots is not None else session_roots():
        base = os.path.abspath(root.path)
        if full.startswith(base + os.sep):
            info = describe(root.tool, tuple(full[len(base) + 1 :].split(os.sep)))
            if info is not None:
                return root, info
    return None


Found = tuple[str, tuple[str, ...], FileInfo]  # path, its parts under the root, what it is


def scan_folder(tool: str, folder: str, parts: tuple[str, ...]) -> tuple[list[str], list[Found]]:
    """One folder under a root (``parts`` is its path under it): the subfolders
    worth descending into, and the transcripts in it. OSError if it cannot be listed."""
    dirs: list[str] = []
    files: list[Found] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            here = (*parts, entry.name)
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if descend(tool, here):
                    dirs.append(entry.path)
            else:
                info = describe(tool, here)
                if info is not None:
                    files.append((entry.path, here, info))
    return dirs, files


def iter_transcripts(roots: list[Root]) -> Iterator[tuple[Root, str, FileInfo]]:
    """Every transcript under ``roots``: a full walk (the watcher walks incrementally)."""
    for root in roots:
        stack: list[tuple[str, tuple[str, ...]]] = [(root.path, ())]
        while stack:
            folder, parts = stack.pop()
            try:
                dirs, files = scan_folder(root.tool, folder, parts)
            except OSError:
                continue
            stack.extend((sub, (*parts, os.path.basename(sub))) for sub in dirs)
            for path, _, info in files:
                yield root, path, info


def escape_cwd(cwd: str) -> str:
    """Claude Code's folder name for a working directory: ``/a/b.c`` -> ``-a-b-c``."""
    return re.sub(r"[^A-Za-z0-9-]", "-", cwd)
