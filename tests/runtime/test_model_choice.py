"""Which model a run gets, and the reason the run header shows."""

from pathlib import Path

import pytest

from server.core.settings import TASK_CLASSES, ModelSettings, RoutingSettings, Settings
from server.runtime.model_choice import choose_model

ROUTED = Settings(
    routing=RoutingSettings(question="anthropic:claude-haiku-4-5", large_change="openai:gpt-5"),
    models=ModelSettings(default="anthropic:claude-sonnet-4-6"),
)


@pytest.mark.parametrize(
    ("asked", "previous", "stored", "settings", "task", "model", "reason"),
    [
        ("ollama:qwen3:8b", None, None, ROUTED, "why?", "ollama:qwen3:8b", "chosen for this run"),
        (None, "openai:gpt-5", None, ROUTED, "why?", "openai:gpt-5", "the conversation's model"),
        ("auto", "openai:gpt-5", None, ROUTED, "why is it slow?", "anthropic:claude-haiku-4-5",
         "routed: a question (it asks rather than tells)"),
        (None, None, None, ROUTED, "Implement a cache", "openai:gpt-5",
         "routed: a large change (it says “Implement”)"),
        (None, None, None, ROUTED, "fix the typo", "anthropic:claude-sonnet-4-6",
         "the default model: no route for a small edit"),
        (None, None, "ollama:llama3", ROUTED, "fix the typo", "ollama:llama3",
         "the default model: no route for a small edit"),
        (None, None, None, Settings(models=ModelSettings(default="openai:gpt-5")), "fix it",
         "openai:gpt-5", "the default model"),
        (None, None, None, Settings(), "fix it", "demo",
         "no model is set up yet, so the scripted demo (add one in Settings)"),
    ],
)
def test_the_model_and_why(
    asked: str | None,
    previous: str | None,
    stored: str | None,
    settings: Settings,
    task: str,
    model: str,
    reason: str,
    tmp_path: Path,
) -> None:
    choice = choose_model(
        asked,
        task=task,
        workspace=tmp_path,
        default=stored or settings.models.default or None,
        routing={k: getattr(settings.routing, k) for k in TASK_CLASSES},
        previous=previous,
    )
    assert (choice.model, choice.reason) == (model, reason)
