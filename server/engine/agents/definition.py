"""One agent file, ``NAME.agent.md``: YAML front matter (where, with what model,
how free, when) and a body, the standing instructions that are its task.

Every key is checked here, once, so that the CLI, the window and the scheduler
all refuse a bad file with the same one-line reason."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from server.core.settings import SANDBOXES
from server.engine.agents.cron import CronError, check_cron
from server.engine.permissions.modes import ContractError, Mode, check_level, parse_mode

SUFFIX: Final = ".agent.md"
NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
MISSED_POLICIES: Final = ("run-once", "skip")
BUDGET_KEYS: Final = ("max_tokens", "max_cost_usd", "max_wall_seconds")
KEYS: Final = (
    "name", "workspace", "model", "autonomy", "mode", "sandbox", "schedule", "missed", "budget",
)
FENCE: Final = "---"

TEMPLATE: Final = """---
name: {name}
# The folder the agent works in (required).
workspace: {workspace}
# provider:model, auto (routing by the task), or demo; leave out for the default.
model: auto
mode: supervised
# autonomy: 0.3
sandbox: local
# A cron expression (minute hour day month weekday), quoted; leave out to run by hand only.
# schedule: "0 9 * * 1-5"
# When the app was closed at a scheduled time: run-once (once at start) or skip.
missed: run-once
# budget:
#   max_tokens: 200000
#   max_wall_seconds: 900
---
Say here what the agent should do each time it runs.
"""


class AgentFileError(ValueError):
    """A file that is not a valid agent; the message says why, in one line."""


@dataclass(frozen=True)
class AgentDef:
    name: str
    path: Path
    workspace: str
    task: str
    model: str | None = None
    mode: str | None = None
    autonomy: float | None = None
    sandbox: str | None = None
    schedule: str | None = None
    missed: str = "run-once"
    budget: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "workspace": self.workspace,
            "task": self.task,
            "model": self.model,
            "mode": self.mode,
            "autonomy": self.autonomy,
            "sandbox": self.sandbox,
            "schedule": self.schedule,
            "missed": self.missed,
            "budget": dict(self.budget),
        }


def check_name(name: str) -> str:
    if not NAME_PATTERN.match(name):
        raise AgentFileError(
            f"{name!r} is not an agent name: letters, digits, - and _, up to 64, "
            "starting with a letter or digit"
        )
    return name


def split_front_matter(text: str) -> tuple[str, str]:
    """The front matter's text and the body; AgentFileError when there is none."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != FENCE:
        raise AgentFileError("the file must start with a front matter block: a line '---'")
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == FENCE:
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise AgentFileError("the front matter is not closed: add a line '---' after it")


def _front_matter(raw: str) -> dict[str, Any]:
    # Imported here: an app without agent files never pays for the parser.
    import yaml

    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        hint = "; quote a cron expression: schedule: \"*/5 * * * *\"" if "alias" in str(
            exc
        ) else ""
        raise AgentFileError(f"the front matter is not valid YAML{where}: {problem}{hint}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise AgentFileError("the front matter must be a mapping of keys to values")
    return data


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise AgentFileError(f"'{key}' must be a non-empty string, not {value!r}")
    return value.strip()


def _budget(value: object) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AgentFileError(f"'budget' must be a mapping of {', '.join(BUDGET_KEYS)}")
    budget: dict[str, float] = {}
    for key, limit in value.items():
        if key not in BUDGET_KEYS:
            raise AgentFileError(
                f"unknown budget key {key!r}: use {', '.join(BUDGET_KEYS)}"
            )
        if isinstance(limit, bool) or not isinstance(limit, int | float) or limit < 0:
            raise AgentFileError(f"budget.{key} must be a number, 0 or more, not {limit!r}")
        budget[key] = int(limit) if key == "max_tokens" else float(limit)
    return budget


def _workspace(value: str | None) -> str:
    if value is None:
        raise AgentFileError("'workspace' is missing: say which folder the agent works in")
    folder = Path(value).expanduser()
    if not folder.is_dir():
        raise AgentFileError(f"the workspace {folder} is not a folder")
    return str(folder.resolve())


def parse_agent(path: Path, text: str) -> AgentDef:
    """The agent that ``text`` defines, its file being ``path``; AgentFileError otherwise."""
    name = check_name(path.name.removesuffix(SUFFIX))
    raw, body = split_front_matter(text)
    data = _front_matter(raw)
    unknown = sorted(str(key) for key in data if key not in KEYS)
    if unknown:
        raise AgentFileError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}: "
            f"an agent file has {', '.join(KEYS)}"
        )
    given = _text(data, "name")
    if given is not None and given != name:
        raise AgentFileError(f"'name' is {given!r} but the file is {path.name}: make them agree")
    mode = _text(data, "mode")
    autonomy: float | None = None
    try:
        if mode is not None and parse_mode(mode) == Mode.EMERGENCY_STOP:
            raise AgentFileError("'mode' cannot be emergency-stop: an agent that may do nothing")
        if data.get("autonomy") is not None:
            autonomy = check_level(data["autonomy"])
    except ContractError as exc:
        raise AgentFileError(str(exc)) from exc
    sandbox = _text(data, "sandbox")
    if sandbox is not None and sandbox not in SANDBOXES:
        raise AgentFileError(f"'sandbox' must be one of {', '.join(SANDBOXES)}, not {sandbox!r}")
    schedule = _text(data, "schedule")
    if schedule is not None:
        try:
            schedule = check_cron(schedule)
        except CronError as exc:
            raise AgentFileError(f"'schedule': {exc}") from exc
    missed = _text(data, "missed") or "run-once"
    if missed not in MISSED_POLICIES:
        raise AgentFileError(f"'missed' must be run-once or skip, not {missed!r}")
    task = body.strip()
    if not task:
        raise AgentFileError("the body is empty: write the agent's standing instructions there")
    return AgentDef(
        name=name,
        path=path,
        workspace=_workspace(_text(data, "workspace")),
        task=task,
        model=_text(data, "model"),
        mode=mode,
        autonomy=autonomy,
        sandbox=sandbox,
        schedule=schedule,
        missed=missed,
        budget=_budget(data.get("budget")),
    )
