"""Which model a run gets when the request does not name one: the
conversation's own, else the route for its class of task (``[routing]``),
else the default model (chosen in the window or ``[models] default``), else
the demo — each with the reason the run header shows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from server.core.settings import Settings
from server.engine.routing import classify_task

AUTO: Final = "auto"
DEFAULT_MODEL_KEY: Final = "models.default"


@dataclass(frozen=True)
class ModelChoice:
    model: str
    reason: str


def choose_model(
    asked: str | None,
    *,
    task: str,
    workspace: Path,
    settings: Settings,
    stored_default: str | None,
    previous: str | None = None,
) -> ModelChoice:
    if asked and asked != AUTO:
        return ModelChoice(asked, "chosen for this run")
    if asked is None and previous:
        return ModelChoice(previous, "the conversation's model")
    found = classify_task(task, workspace)
    routed = getattr(settings.routing, found.task_class.value)
    if routed:
        return ModelChoice(routed, f"routed: {found.task_class.label} ({found.why})")
    default = stored_default or settings.models.default
    if default:
        routes = [getattr(settings.routing, f) for f in settings.routing.__dataclass_fields__]
        if any(routes):
            return ModelChoice(
                default, f"the default model: no route for {found.task_class.label}"
            )
        return ModelChoice(default, "the default model")
    return ModelChoice(
        "demo", "no model is set up yet, so the scripted demo (add one in Settings)"
    )
