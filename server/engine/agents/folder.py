"""The agents folder, ``<config>/agents``: every ``NAME.agent.md`` in it, read
and checked. A file that does not pass is listed with its reason, never left
out, so that a typo shows instead of an agent that silently never runs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.engine.agents.definition import (
    SUFFIX,
    TEMPLATE,
    AgentDef,
    AgentFileError,
    check_name,
    parse_agent,
)

MAX_FILE_BYTES = 256_000


@dataclass(frozen=True)
class InvalidAgent:
    name: str
    path: Path
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "reason": self.reason}


@dataclass(frozen=True)
class AgentListing:
    agents: list[AgentDef]
    invalid: list[InvalidAgent]

    def get(self, name: str) -> AgentDef | InvalidAgent | None:
        found: list[AgentDef | InvalidAgent] = [a for a in self.agents if a.name == name]
        found += [i for i in self.invalid if i.name == name]
        return found[0] if found else None


def read_text(path: Path) -> str:
    """The file's text; AgentFileError when it cannot be read as UTF-8 text."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise AgentFileError(f"the file is larger than {MAX_FILE_BYTES:,} bytes")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentFileError(f"the file cannot be read: {exc}") from exc


class AgentFolder:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path_of(self, name: str) -> Path:
        return self.folder / f"{check_name(name)}{SUFFIX}"

    def files(self) -> list[Path]:
        try:
            found = [p for p in self.folder.iterdir() if p.name.endswith(SUFFIX)]
        except FileNotFoundError:
            return []
        return sorted(found)

    def signature(self) -> tuple[tuple[str, int, int], ...]:
        """What changes when a file is added, removed or written: cheap to take at
        each wake-up of the scheduler, so that edits need no watcher."""
        marks = []
        for path in self.files():
            try:
                st = path.stat()
            except OSError:
                continue
            marks.append((path.name, st.st_mtime_ns, st.st_size))
        return tuple(marks)

    def load(self, path: Path) -> AgentDef:
        return parse_agent(path, read_text(path))

    def scan(self) -> AgentListing:
        agents: list[AgentDef] = []
        invalid: list[InvalidAgent] = []
        for path in self.files():
            name = path.name.removesuffix(SUFFIX)
            try:
                agents.append(self.load(path))
            except AgentFileError as exc:
                invalid.append(InvalidAgent(name, path, str(exc)))
        return AgentListing(agents, invalid)

    def read(self, name: str) -> str | None:
        path = self.path_of(name)
        return read_text(path) if path.exists() else None

    def check(self, name: str, text: str) -> AgentDef:
        """The agent ``text`` would define as ``name``; AgentFileError otherwise."""
        if len(text.encode()) > MAX_FILE_BYTES:
            raise AgentFileError(f"the file is larger than {MAX_FILE_BYTES:,} bytes")
        return parse_agent(self.path_of(name), text)

    def write(self, name: str, text: str) -> AgentDef:
        """Checks first, then replaces the file whole (a reader never sees half of it)."""
        agent = self.check(name, text)
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = agent.path.with_name(f".{agent.path.name}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, agent.path)
        return agent

    def create(self, name: str, workspace: str) -> Path:
        """A new file from the template; FileExistsError when there is one."""
        path = self.path_of(name)
        self.folder.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as handle:
            handle.write(TEMPLATE.format(name=name, workspace=workspace))
        return path

    def delete(self, name: str) -> bool:
        path = self.path_of(name)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True
