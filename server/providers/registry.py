"""Which model a run uses, by its id: the scripted models by name, every other
one as ``provider:model`` through its endpoint (endpoints.py)."""

from __future__ import annotations

from server.core.settings import Settings
from server.providers.base import Provider
from server.providers.capabilities import accepts_images
from server.providers.catalog import BUILTIN
from server.providers.demo import demo_provider
from server.providers.endpoints import KeyLookup, MissingKey, ModelIdError, resolve
from server.providers.pricing import ModelFacts, model_facts
from server.providers.scripted import (
    ScriptedProvider,
    ScriptError,
    parse_script,
    script_accepts_images,
)

SCRIPTED_MODELS: dict[str, str] = {
    "demo": "Demo (scripted model)",
    "script": "A scripted model from a JSON script",
}


class UnknownModel(ValueError):
    """A model that cannot be used as named; the message says why and what would work."""


def make_provider(
    model: str,
    settings: Settings,
    *,
    keys: KeyLookup,
    script: object | None = None,
    demo_delay: float = 0.0,
) -> tuple[Provider, ModelFacts | None]:
    """The provider of ``model`` and what is known of its window and prices (None
    for the scripted models). Only the demo is slowed down, so people can watch it."""
    if model == "demo":
        return demo_provider(demo_delay), None
    if model == "script":
        if script is None:
            raise UnknownModel('model "script" needs a script: {"turns": [...]}')
        try:
            turns = parse_script(script)
            images = script_accepts_images(script)
            return ScriptedProvider(turns, name="script", accepts_images=images), None
        except ScriptError as exc:
            raise UnknownModel(str(exc)) from exc
    try:
        endpoint, name = resolve(model, settings, keys)
    except (ModelIdError, MissingKey) as exc:
        raise UnknownModel(str(exc)) from exc
    from server.providers.adapter import ModelAdapter

    builtin = BUILTIN.get(endpoint.name)
    facts = model_facts(
        model,
        settings,
        price_id=endpoint.price_id,
        configured_window=endpoint.context_window,
        known_price_id=builtin.price_id if builtin else None,
    )
    adapter = ModelAdapter(endpoint, name, settings.models)
    adapter.accepts_images = accepts_images(model, settings.models)
    return adapter, facts
