"""The tools a run can call, by exact name."""

from __future__ import annotations

from collections.abc import Iterable

from server.engine.tools.base import Tool
from server.engine.tools.edit import DeleteFile, EditFile
from server.engine.tools.fetch import FetchUrl
from server.engine.tools.files import ListDir, ReadFile, WriteFile
from server.engine.tools.memory import MemoryTool
from server.engine.tools.search import Glob, Grep
from server.engine.tools.shell import RunShell
from server.providers.base import ToolSpec


class ToolSet:
    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(t.name, t.description, t.parameters) for t in self._tools.values()]


def default_tools() -> ToolSet:
    return ToolSet(
        [
            ReadFile(),
            ListDir(),
            Glob(),
            Grep(),
            WriteFile(),
            EditFile(),
            DeleteFile(),
            RunShell(),
            FetchUrl(),
            MemoryTool(),
        ]
    )
