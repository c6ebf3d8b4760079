"""memory: the agent's durable notes. ``remember`` saves a fact of this
workspace (the same key updates it), ``recall`` reads one (or, without a key,
all it sees), ``forget`` removes one. Writes pass the memory guards like any
other; a rejection goes back to the model with its reason. Saved facts are in
later runs' system prompts, as information."""

from __future__ import annotations

from typing import Any, Final

from server.engine.memory import Fact, MemoryWriteError
from server.engine.tools.base import Risk, ToolArgumentError, ToolContext, ToolOutput, check_args

ACTIONS: Final = ("remember", "recall", "forget")


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS), "description": "What to do."},
            "key": {
                "type": "string",
                "description": "A short name for the note (needed to remember or forget).",
            },
            "value": {"type": "string", "description": "The note itself (to remember)."},
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def _line(fact: Fact) -> str:
    scope = "this workspace" if fact.workspace else "global"
    return f"{fact.key}: {fact.value}  ({scope}, id {fact.id})"


class MemoryTool:
    name = "memory"
    description = (
        "Durable notes that outlive this run. action=remember saves key: value for this "
        "workspace (the same key replaces it); action=recall returns the note of a key, or "
        "every note without one; action=forget removes the note of a key. Save only what "
        "will help later (the user's preferences, how this project builds and tests); never "
        "secrets. Notes are shown to later runs as information, not instructions."
    )
    # The highest of its actions; per call, recall is a read (risk_for).
    risk = Risk.MUTATING
    # Notes live in Sparrow's own folders: no checkpoint of the workspace, no verify.
    touches_workspace = False
    parameters = _schema()

    def risk_for(self, args: dict[str, Any]) -> Risk:
        action = args.get("action")
        if isinstance(action, str) and action.strip().lower() == "recall":
            return Risk.READ_ONLY
        return Risk.MUTATING

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        checked = check_args(self, args)
        action = checked["action"].strip().lower()
        if action not in ACTIONS:
            raise ToolArgumentError(f"memory: action is one of {', '.join(ACTIONS)}")
        memory = ctx.memory
        if memory is None:
            return ToolOutput(False, "memory: this run has no memory to use")
        key = checked.get("key", "").strip()
        try:
            if action == "remember":
                if "value" not in checked:
                    raise ToolArgumentError("memory: remember needs a value")
                fact = memory.remember(key, checked["value"])
                return ToolOutput(True, f"remembered {_line(fact)}")
            if action == "recall":
                facts = memory.recall(key or None)
                if not facts:
                    return ToolOutput(True, f"no note '{key}'" if key else "no notes yet")
                return ToolOutput(True, "\n".join(_line(f) for f in facts))
            if not key:
                raise ToolArgumentError("memory: forget needs the key of the note")
            gone = memory.forget(key)
        except MemoryWriteError as exc:
            return ToolOutput(False, f"memory: {exc}")
        if gone is None:
            return ToolOutput(False, f"memory: no note '{key}' to forget")
        return ToolOutput(True, f"forgot {_line(gone)}")
