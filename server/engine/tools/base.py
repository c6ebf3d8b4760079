"""What a tool is: a name, a JSON schema for its arguments, a risk level, and
an async ``run`` that turns arguments into an output the model reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from server.core.settings import Settings
from server.engine.workspace import Workspace

if TYPE_CHECKING:
    from server.engine.memory import WorkspaceMemory
    from server.engine.sandbox.base import Sandbox


class Risk(StrEnum):
    """The risk levels of autonomy-and-safety.md, spelled as it spells them."""

    READ_ONLY = "ReadOnly"
    MUTATING = "Mutating"
    EXEC = "Exec"
    DESTRUCTIVE = "Destructive"
    NETWORK = "Network"


class ToolArgumentError(ValueError):
    """Arguments that do not fit the tool's schema; the model sees the message."""


@dataclass(frozen=True)
class ToolOutput:
    ok: bool
    content: str
    truncated: bool = False
    exit_code: int | None = None  # a command's, when one ran to its end


def _nothing_denied(relative: str) -> bool:
    return False


@dataclass(frozen=True)
class ToolContext:
    workspace: Workspace
    settings: Settings
    # Whether a workspace-relative path (posix, resolved) is one the run may not
    # read or change: tools that walk folders (grep, glob) leave such paths out.
    denied: Callable[[str], bool] = field(default=_nothing_denied)
    # Where commands run; None: the plain local sandbox of the workspace.
    sandbox: Sandbox | None = None
    # The memory tool's memory (of the run's own workspace, not a worktree's);
    # None: the run has none.
    memory: WorkspaceMemory | None = None


class Tool(Protocol):
    name: str
    description: str
    risk: Risk
    parameters: dict[str, Any]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput: ...


def string_schema(
    required: dict[str, str], optional: dict[str, str] | None = None
) -> dict[str, Any]:
    """A JSON schema of string properties, each with its description."""
    props = {name: {"type": "string", "description": text} for name, text in required.items()}
    props |= {n: {"type": "string", "description": t} for n, t in (optional or {}).items()}
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


def check_args(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments, checked against the tool's schema (strings, and whole numbers
    where it says ``integer``), or a ToolArgumentError naming what is wrong."""
    schema = tool.parameters
    if "_raw" in args and len(args) == 1:
        raise ToolArgumentError(
            f"{tool.name}: the arguments are not a JSON object: {str(args['_raw'])[:200]!r}"
        )
    known = schema["properties"]
    unknown = sorted(set(args) - set(known))
    if unknown:
        raise ToolArgumentError(f"{tool.name}: unknown argument(s) {', '.join(unknown)}")
    for name in schema["required"]:
        if name not in args:
            raise ToolArgumentError(f"{tool.name}: missing required argument '{name}'")
    checked: dict[str, Any] = {}
    for name, value in args.items():
        if known[name].get("type") == "integer":
            checked[name] = _whole_number(tool, name, value)
        elif isinstance(value, str):
            checked[name] = value
        else:
            raise ToolArgumentError(f"{tool.name}: argument '{name}' must be a string")
    return checked


def _whole_number(tool: Tool, name: str, value: object) -> int:
    # Models often send numbers as strings ("10"): take them as meant.
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise ToolArgumentError(f"{tool.name}: argument '{name}' must be a whole number from 1")


def truncate(text: str, limit: int) -> tuple[str, bool]:
    """At most ``limit`` characters, and whether anything was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"\n… [{len(text) - limit} more characters not shown]", True
