"""Which model a run gets when the request does not name one: the
conversation's own, else the route for its class of task (``[routing]``),
else the default model (chosen in the window or ``[models] default``), else
the demo — each with the reason the run header shows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from server.core.settings import TASK_CLASSES, Settings
from server.engine.store import Store

AUTO: Final = "auto"
DEFAULT_MODEL_KEY: Final = "models.default"
ROUTE_KEY: Final = "routing.{}"


def default_model(store: Store, settings: Settings) -> str | None:
    """The one chosen in the window (or by a CLI), else ``[models] default``."""
    stored = store.preference(DEFAULT_MODEL_KEY)
    return stored if isinstance(stored, str) and stored else settings.models.default or None


def routes(store: Store, settings: Settings) -> dict[str, str]:
    """The model of each class of task ("" where none is set), the window's
    choices first, then ``[routing]``."""
    table = {}
    for name in TASK_CLASSES:
        stored = store.preference(ROUTE_KEY.format(name))
        own = stored if isinstance(stored, str) else ""
        table[name] = own or getattr(settings.routing, name)
    return table


class PreferenceError(ValueError):
    """A preference that cannot be kept as asked; the message says why."""


@dataclass(frozen=True)
class ModelChoice:
    model: str
    reason: str


def choose_model(
    asked: str | None,
    *,
    task: str,
    workspace: Path,
    default: str | None,
    routing: Mapping[str, str],
    previous: str | None = None,
) -> ModelChoice:
    if asked and asked != AUTO:
        return ModelChoice(asked, "chosen for this run")
    if asked is None and previous:
        return ModelChoice(previous, "the conversation's model")
    # Its regular expressions cost ~4 ms to build: at the first run, not at start-up.
    from server.engine.routing import classify_task

    found = classify_task(task, workspace)
    routed = routing.get(found.task_class.value, "")
    if routed:
        return ModelChoice(routed, f"routed: {found.task_class.label} ({found.why})")
    if default:
        if any(routing.values()):
            return ModelChoice(
                default, f"the default model: no route for {found.task_class.label}"
            )
        return ModelChoice(default, "the default model")
    return ModelChoice(
        "demo", "no model is set up yet, so the scripted demo (add one in Settings)"
    )
