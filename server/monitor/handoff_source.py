"""What a Claude Code or Codex session did, read from its whole transcript, for
a handoff doc: its messages, the files its edit calls changed and the shell
commands it ran. The engine's ``distill`` turns this into the doc (the runtime
joins the two: the monitor never imports the engine).

Claude Code: ``tool_use`` blocks of assistant lines (``Edit``, ``MultiEdit``,
``Write``, ``NotebookEdit``; ``Bash``) and the ``tool_result`` blocks of the user
lines that answer them (``is_error`` for a call that failed or was refused).
Codex: ``response_item`` payloads ``function_call`` (``shell``,
``shell_command``, ``exec_command``, ``apply_patch``), ``custom_tool_call``
(``apply_patch``) and ``local_shell_call``, answered by ``*_output`` payloads
with the same ``call_id``; the messages are ``message`` payloads.

A file counts once its call succeeded; a command once it ran (a failing test
run is still a test run), not when it was refused.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from server.monitor.discovery import Root, describe_path, iter_transcripts
from server.monitor.reader import load_line
from server.monitor.state import CLAUDE_CODE, CODEX

CLAUDE_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
CLAUDE_SHELL_TOOLS = frozenset({"Bash"})
CODEX_SHELL_TOOLS = frozenset({"shell", "shell_command", "exec_command", "container.exec"})
CODEX_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
CODEX_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
# Claude Code's answer to a call the user or a rule refused: it never ran.
_REFUSED = ("The user doesn't want to proceed", "Permission to use ")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_EXIT_CODE = re.compile(r"^Exit code: (-?\d+)", re.M)
_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh"})
MAX_TASK_CHARS = 1000
SNIFF_LINES = 50


@dataclass
class SessionWork:
    tool: str
    path: str  # the transcript
    session_id: str
    project: str  # the working folder the transcript records ("" if none)
    prompts: list[str] = field(default_factory=list)  # the user's messages, in order
    texts: list[str] = field(default_factory=list)  # the user's and the agent's messages
    files: list[str] = field(default_factory=list)  # changed by its calls, first change first
    commands: list[str] = field(default_factory=list)  # shell commands that ran, in order

    @property
    def task(self) -> str:
        """The session's first request, as the task of its handoff."""
        first = self.prompts[0].strip() if self.prompts else ""
        return first if len(first) <= MAX_TASK_CHARS else first[:MAX_TASK_CHARS] + "…"


@dataclass(frozen=True)
class FoundSession:
    path: str
    tool: str
    subagent: bool = False


# --- finding a session --------------------------------------------------------------


def find_session(ident: str, roots: list[Root]) -> FoundSession | None:
    """A session by its transcript's path (its key) or by its session id, as
    ``sparrow monitor --json`` shows them; the newest file when an id is in several."""
    path = os.path.abspath(os.path.expanduser(ident))
    if os.path.isfile(path):
        described = describe_path(path, roots)
        if described is not None:
            root, info = described
            return FoundSession(path, root.tool, info.subagent)
        tool = sniff_tool(path)
        return None if tool is None else FoundSession(path, tool)
    matches = [
        (path, root.tool, info.subagent)
        for root, path, info in iter_transcripts(roots)
        if info.session_id == ident
    ]
    if not matches:
        return None
    newest = max(matches, key=lambda m: _mtime(m[0]))
    return FoundSession(*newest)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def sniff_tool(path: str) -> str | None:
    """Which tool wrote the transcript at ``path``, by its first lines; None if neither."""
    try:
        with open(path, "rb") as handle:
            for _ in range(SNIFF_LINES):
                raw = handle.readline()
                if not raw:
                    break
                obj = load_line(raw.strip())
                if obj is None:
                    continue
                if isinstance(obj.get("payload"), dict) and "timestamp" in obj:
                    return CODEX
                if "sessionId" in obj or obj.get("type") in ("user", "assistant", "summary"):
                    return CLAUDE_CODE
    except OSError:
        return None
    return None


# --- reading one -------------------------------------------------------------------


def read_session_work(path: str, tool: str, session_id: str = "") -> SessionWork:
    """The whole transcript read forward (OSError if it cannot be read)."""
    work = SessionWork(tool, path, session_id, "")
    reader: _ClaudeWork | _CodexWork = (
        _ClaudeWork(work) if tool == CLAUDE_CODE else _CodexWork(work)
    )
    with open(path, "rb") as handle:
        for raw in handle:
            obj = load_line(raw.strip())
            if obj is not None:
                reader.feed(obj)
    reader.finish()
    return work


class _Calls:
    """The calls waiting for their result, and what each adds once it has one."""

    def __init__(self, work: SessionWork) -> None:
        self.work = work
        self.pending: dict[str, tuple[list[str], str | None]] = {}  # id -> (files, command)
        self._files: dict[str, None] = {}
        self._commands: list[str] = []

    def called(self, ident: str, files: list[str], command: str | None) -> None:
        if files or command:
            self.pending[ident] = (files, command)

    def answered(self, ident: str, *, ran: bool, succeeded: bool) -> None:
        found = self.pending.pop(ident, None)
        if found is None:
            return
        files, command = found
        if command and ran:
            self._commands.append(command)
        if succeeded:
            self._files.update(dict.fromkeys(self._relative(f) for f in files))

    def _relative(self, path: str) -> str:
        project = self.work.project
        if project and os.path.isabs(path):
            inside = os.path.relpath(path, project)
            if not inside.startswith(".." + os.sep) and inside != "..":
                return inside
        return path

    def finish(self) -> None:
        self.work.files = list(self._files)
        self.work.commands = self._commands


def _add_text(work: SessionWork, text: str, user: bool) -> None:
    text = text.strip()
    # Wrapped text is the tool's own (slash commands, environment, instructions).
    if not text or text.startswith("<"):
        return
    work.texts.append(text)
    if user:
        work.prompts.append(text)


class _ClaudeWork:
    def __init__(self, work: SessionWork) -> None:
        self.work = work
        self.calls = _Calls(work)

    def feed(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind not in ("user", "assistant"):
            return
        work = self.work
        cwd = obj.get("cwd")
        if isinstance(cwd, str) and cwd and not work.project:
            work.project = cwd
        session = obj.get("sessionId")
        if isinstance(session, str) and session and not work.session_id:
            work.session_id = session
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        content = message.get("content")
        if kind == "user":
            # Claude Code's own lines: meta notes, and the summary a compaction writes.
            if obj.get("isMeta") is True or obj.get("isCompactSummary") is True:
                return
            if isinstance(content, str):
                _add_text(work, content, user=True)
                return
        if not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, dict):
                self._block(block, user=kind == "user")

    def _block(self, block: dict[str, Any], user: bool) -> None:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            _add_text(self.work, block["text"], user)
        elif kind == "tool_use" and not user:
            ident, name, args = block.get("id"), block.get("name"), block.get("input")
            if isinstance(ident, str) and isinstance(name, str) and isinstance(args, dict):
                files, command = _claude_call(name, args)
                self.calls.called(ident, files, command)
        elif kind == "tool_result" and user:
            ident = block.get("tool_use_id")
            if isinstance(ident, str):
                failed = block.get("is_error") is True
                refused = failed and _result_text(block.get("content")).startswith(_REFUSED)
                self.calls.answered(ident, ran=not refused, succeeded=not failed)

    def finish(self) -> None:
        self.calls.finish()


def _claude_call(name: str, args: dict[str, Any]) -> tuple[list[str], str | None]:
    if name in CLAUDE_EDIT_TOOLS:
        path = args.get("file_path") or args.get("notebook_path")
        return ([path] if isinstance(path, str) and path else []), None
    if name in CLAUDE_SHELL_TOOLS:
        command = args.get("command")
        return [], command if isinstance(command, str) and command.strip() else None
    return [], None


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


class _CodexWork:
    def __init__(self, work: SessionWork) -> None:
        self.work = work
        self.calls = _Calls(work)

    def feed(self, obj: dict[str, Any]) -> None:
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            return
        kind = obj.get("type")
        work = self.work
        if kind in ("session_meta", "turn_context"):
            cwd = payload.get("cwd")
            if isinstance(cwd, str) and cwd and not work.project:
                work.project = cwd
            ident = payload.get("id")
            if kind == "session_meta" and isinstance(ident, str) and not work.session_id:
                work.session_id = ident
            return
        if kind != "response_item":
            return
        item = payload.get("type")
        if item == "message":
            self._message(payload)
        elif item in CODEX_CALLS:
            ident = payload.get("call_id")
            if isinstance(ident, str):
                files, command = _codex_call(payload)
                self.calls.called(ident, files, command)
                if item == "local_shell_call" and payload.get("status") == "completed":
                    # It carries its own outcome: no output line need follow.
                    self.calls.answered(ident, ran=True, succeeded=True)
        elif item in CODEX_OUTPUTS:
            ident = payload.get("call_id")
            if isinstance(ident, str):
                failed = _codex_failed(payload.get("output"))
                self.calls.answered(ident, ran=True, succeeded=not failed)

    def _message(self, payload: dict[str, Any]) -> None:
        role = payload.get("role")
        content = payload.get("content")
        if role not in ("user", "assistant") or not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                _add_text(self.work, block["text"], user=role == "user")

    def finish(self) -> None:
        self.calls.finish()


def _codex_call(payload: dict[str, Any]) -> tuple[list[str], str | None]:
    item = payload.get("type")
    if item == "local_shell_call":
        action = payload.get("action")
        command = action.get("command") if isinstance(action, dict) else None
        return _shell(command)
    name = payload.get("name")
    if item == "custom_tool_call":
        patch = payload.get("input")
        if name == "apply_patch" and isinstance(patch, str):
            return _patch_files(patch), None
        return [], None
    args = _arguments(payload.get("arguments"))
    if name == "apply_patch":
        patch = args.get("input") or args.get("patch")
        return (_patch_files(patch) if isinstance(patch, str) else []), None
    if name in CODEX_SHELL_TOOLS:
        return _shell(args.get("command", args.get("cmd")))
    return [], None


def _arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _shell(command: object) -> tuple[list[str], str | None]:
    """The command line of a shell call; ``apply_patch`` through the shell is an edit."""
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        parts: list[str] = command
        if len(parts) >= 3 and parts[0] in _SHELLS and parts[1] in ("-lc", "-c"):
            line = parts[2]
        elif parts and parts[0] == "apply_patch" and len(parts) >= 2:
            return _patch_files(parts[1]), None
        else:
            line = shlex.join(parts)
    elif isinstance(command, str):
        line = command
    else:
        return [], None
    line = line.strip()
    if line.startswith("apply_patch"):
        return _patch_files(line), None
    return [], line or None


def _patch_files(patch: str) -> list[str]:
    return [(match.group(1) or match.group(2)).strip() for match in _PATCH_FILE.finditer(patch)]


def _codex_failed(output: object) -> bool:
    """Whether a call's output says it failed: a non-zero exit code, in either of
    the shapes Codex writes (JSON with ``metadata.exit_code``, or text)."""
    if not isinstance(output, str):
        return False
    data = _arguments(output) if output.startswith("{") else {}
    metadata = data.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("exit_code"), int):
        return bool(metadata["exit_code"])
    text = data.get("output") if isinstance(data.get("output"), str) else output
    found = _EXIT_CODE.search(text) if isinstance(text, str) else None
    return found is not None and int(found.group(1)) != 0
