"""What a run tells the model before the conversation: who it is, where it
works, what it may do, how to use the tools — and the project's own
instruction file (AGENTS.md, else CLAUDE.md, else .sparrow/instructions.md),
cut to a bound with a visible notice.

Assembled once at the start of a run: a stable prefix is what prompt caching
needs. The mode and the dial may still move mid-run; the gate reads them at
every call, and a denial tells the model why."""

from __future__ import annotations

import datetime
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from server.engine.permissions.modes import Band, Contract, Mode
from server.engine.workspace import OutsideWorkspace, SymlinkLoop, Workspace

INSTRUCTION_FILES: Final = ("AGENTS.md", "CLAUDE.md", ".sparrow/instructions.md")
GIT_TIMEOUT_SECONDS: Final = 3.0
GIT_LINES_SHOWN: Final = 15

_MODE_WORDS: Final = {
    Mode.READ_ONLY: "read-only: you may read and search; every change and command is refused",
    Mode.PLAN: "plan: no tool runs at all; answer with a plan the user can approve",
    Mode.EMERGENCY_STOP: "emergency stop: every tool call is refused",
}
_BAND_WORDS: Final = {
    Band.SUPERVISED: "file changes and shell commands wait for the user's approval",
    Band.TRUSTED: "file changes and shell commands run at once (checkpointed first); "
    "deleting files asks the user",
    Band.AUTONOMOUS: "most calls run at once (checkpointed first); deleting files asks the user",
}


@dataclass(frozen=True)
class Instructions:
    path: str  # relative to the workspace
    text: str
    cut: bool
    size: int  # bytes, before any cut


def project_instructions(workspace: Workspace, limit: int) -> Instructions | None:
    """The first instruction file the workspace has, at most ``limit`` bytes of it."""
    for name in INSTRUCTION_FILES:
        try:
            path = workspace.resolve(name)
        except (OutsideWorkspace, SymlinkLoop):
            continue  # a link out of the workspace is not the project's to give
        if not path.is_file():
            continue
        try:
            with path.open("rb") as handle:
                data = handle.read(limit + 1)
            size = path.stat().st_size
        except OSError:
            continue
        cut = len(data) > limit
        text = data[:limit].decode("utf-8", errors="replace")
        return Instructions(name, text, cut, size)
    return None


def git_summary(root: Path) -> str:
    """The branch and the changed files, in a few lines; what it cannot tell, said plainly."""
    git = shutil.which("git")
    if git is None:
        return "git is not installed, so its status is not known"
    try:
        result = subprocess.run(
            [git, "-C", str(root), "status", "--porcelain=v1", "--branch", "-unormal"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"git status took longer than {GIT_TIMEOUT_SECONDS:g} s and was not waited for"
    except OSError as exc:
        return f"git status could not run: {exc.strerror}"
    if result.returncode != 0:
        return "not a git repository"
    lines = result.stdout.splitlines()
    branch = lines[0].removeprefix("## ") if lines else "(unknown branch)"
    changes = lines[1:]
    if not changes:
        return f"branch {branch}; no uncommitted changes"
    shown = "\n".join(f"  {line}" for line in changes[:GIT_LINES_SHOWN])
    more = len(changes) - GIT_LINES_SHOWN
    tail = f"\n  … and {more} more" if more > 0 else ""
    return f"branch {branch}; {len(changes)} changed or untracked paths:\n{shown}{tail}"


def _permissions_line(contract: Contract) -> str:
    words = _MODE_WORDS.get(contract.mode)
    if words is None:
        words = f"{contract.band.value} ({contract.level:.2f}): {_BAND_WORDS[contract.band]}"
    return words


def system_prompt(
    workspace: Workspace,
    contract: Contract,
    *,
    git: str,
    instructions: Instructions | None,
    shell_timeout: float,
    today: datetime.date | None = None,
    memory: str = "",
) -> str:
    today = today or datetime.date.today()
    system = f"{platform.system()} {platform.release()} ({platform.machine()})"
    parts = [
        "You are Sparrow, a coding agent. You work in the user's own folder on their "
        "computer, with the tools below; the user watches every call live, may be asked "
        "to approve it, and can rewind any change you make.",
        f"Workspace: {workspace.root}\n"
        "Every path you give a tool is relative to the workspace; nothing outside it can "
        "be read or written.\n"
        f"Operating system: {system}\n"
        f"Today: {today.isoformat()}\n"
        f"Git: {git}\n"
        f"Permissions: {_permissions_line(contract)}.",
        "How to work:\n"
        "- Look before you change: list_dir, glob and grep to find your way, read_file "
        "before you edit a file.\n"
        "- Change existing files with edit_file (one exact, unique passage at a time); use "
        "write_file for new files or a complete rewrite.\n"
        f"- run_shell runs a non-interactive command in the workspace (killed after "
        f"{shell_timeout:g} s); use it to build, test and inspect. Prefer the file tools for "
        "reading and editing files.\n"
        "- A refused or failed call comes back as its result with the reason: do not "
        "repeat it unchanged; change course or ask the user.\n"
        "- Secrets are protected: .env files, keys, .ssh and .git are refused.\n"
        "- memory keeps short notes for later runs (the user's preferences, how this project "
        "builds and tests): save what will help next time, never secrets.\n"
        "- Be brief. When the task is done, end with a short summary of what you changed "
        "and anything left to do. Never claim a change or a result that no tool call "
        "showed.",
    ]
    if instructions is not None:
        note = (
            f" (cut: only its first {len(instructions.text.encode()):,} of "
            f"{instructions.size:,} bytes are shown)"
            if instructions.cut
            else ""
        )
        parts.append(
            f"The project's instructions, from {instructions.path}{note}:\n\n"
            f"{instructions.text.strip()}"
        )
    if memory:
        # Last: the notes never stand between the rules above and the model.
        parts.append(memory)
    return "\n\n".join(parts)
