"""Which class of task a prompt is — a question, a small edit, a large change,
or a long-running task — by rules on the prompt and the workspace, with no
model call (it runs before every run and must cost nothing). The settings'
``[routing]`` table maps each class to a model; the run header shows the
class and the rule that picked it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final


class TaskClass(StrEnum):
    QUESTION = "question"
    SMALL_EDIT = "small_edit"
    LARGE_CHANGE = "large_change"
    LONG_RUNNING = "long_running"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS: Final = {
    TaskClass.QUESTION: "a question",
    TaskClass.SMALL_EDIT: "a small edit",
    TaskClass.LARGE_CHANGE: "a large change",
    TaskClass.LONG_RUNNING: "a long-running task",
}


@dataclass(frozen=True)
class Classification:
    task_class: TaskClass
    why: str  # the rule that decided, in words


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(patterns) + r")\b", re.IGNORECASE)


_LONG_RUNNING: Final = _words(
    r"overnight",
    r"keep going",
    r"until (?:all |the )*tests? pass(?:es)?",
    r"(?:every|all(?: the)?) (?:files?|modules?|packages?|tests?|call ?sites?|usages?)",
    r"(?:whole|entire) (?:codebase|code base|repo(?:sitory)?|project|monorepo)",
    r"migrate",
    r"port (?:the|this|it|our)",
    r"upgrade \S+ (?:from \S+ )?to",
)
_LARGE_CHANGE: Final = _words(
    r"implement\w*",
    r"refactor\w*",
    r"rewrit\w+",
    r"redesign\w*",
    r"restructur\w+",
    r"architect\w*",
    r"add (?:a |an |the )?(?:new )?(?:feature|support|endpoint|command|page|view|module|api|"
    r"integration|backend|frontend|screen)s?",
    r"(?:build|create|scaffold|set up|bootstrap) (?:a |an |the )?(?:new |small |simple )?"
    r"(?:app|application|service|server|module|package|project|cli|library|website|site|game|"
    r"tool|api)",
    r"split \S+(?: \S+)? into",
)
_EDIT: Final = _words(
    r"fix\w*",
    r"renam\w+",
    r"change\w*",
    r"updat\w+",
    r"add\w*",
    r"remov\w+",
    r"delet\w+",
    r"tweak\w*",
    r"typo\w*",
    r"bump\w*",
    r"adjust\w*",
    r"correct",
    r"move",
    r"replac\w+",
    r"write",
    r"creat\w+",
    r"make",
    r"edit\w*",
    r"format\w*",
    r"convert\w*",
    r"build",
    r"set up",
)
_ASKING: Final = re.compile(
    r"^\s*(?:what|why|how|where|when|which|who|whose|is|are|was|does|do|did|explain|describe|"
    r"summari[sz]e|tell me|show me|walk me through|give me an overview|list)\b",
    re.IGNORECASE,
)
_HOW: Final = re.compile(r"^\s*(?:what|why|how|where|when|which|who|explain)\b", re.IGNORECASE)
_LIST_ITEM: Final = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+\S", re.MULTILINE)
_PATH: Final = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.[A-Za-z][\w]{0,7}\b")
_CREATION: Final = _words(r"creat\w+", r"build", r"make", r"write", r"set up", r"scaffold\w*")

LONG_PROMPT_CHARS: Final = 2000
SHORT_PROMPT_CHARS: Final = 400


def _empty_folder(root: Path | None) -> bool:
    """No file or folder at the top but hidden ones (a new project); cheap at any size."""
    if root is None:
        return False
    try:
        with os.scandir(root) as entries:
            return not any(not e.name.startswith(".") for e in entries)
    except OSError:
        return False


def classify_task(task: str, workspace: Path | None = None) -> Classification:
    text = task.strip()
    items = len(_LIST_ITEM.findall(text))
    paths = {p for p in _PATH.findall(text) if not p[0].isdigit()}
    if (match := _LONG_RUNNING.search(text)) is not None:
        return Classification(TaskClass.LONG_RUNNING, f"it says “{match.group(0)}”")
    if items >= 6:
        return Classification(TaskClass.LONG_RUNNING, f"it lists {items} steps")
    if len(text) > LONG_PROMPT_CHARS:
        return Classification(TaskClass.LONG_RUNNING, f"it is {len(text):,} characters long")
    asking = _ASKING.match(text) is not None or text.endswith("?")
    edit = _EDIT.search(text)
    # "How do I fix it?" asks; "Can you fix it?" wants it fixed.
    if asking and (edit is None or _HOW.match(text) is not None):
        return Classification(TaskClass.QUESTION, "it asks rather than tells")
    if (match := _LARGE_CHANGE.search(text)) is not None:
        return Classification(TaskClass.LARGE_CHANGE, f"it says “{match.group(0)}”")
    if items >= 3:
        return Classification(TaskClass.LARGE_CHANGE, f"it lists {items} steps")
    if len(paths) >= 3:
        return Classification(TaskClass.LARGE_CHANGE, f"it names {len(paths)} files")
    if _CREATION.search(text) and _empty_folder(workspace):
        return Classification(TaskClass.LARGE_CHANGE, "it builds in an empty folder")
    if edit is not None and len(text) <= SHORT_PROMPT_CHARS:
        return Classification(TaskClass.SMALL_EDIT, f"a short request to {edit.group(0).lower()}")
    if edit is not None:
        return Classification(TaskClass.LARGE_CHANGE, "a long request for changes")
    if asking:
        return Classification(TaskClass.QUESTION, "it asks rather than tells")
    return Classification(TaskClass.SMALL_EDIT, "no stronger sign, so the middle way")
