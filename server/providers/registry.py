"""Which model a run uses, by the name a surface gives."""

from __future__ import annotations

from server.providers.base import Provider
from server.providers.demo import demo_provider
from server.providers.scripted import ScriptedProvider, parse_script

MODELS: dict[str, str] = {
    "demo": "Demo (scripted model)",
    "script": "A scripted model from a JSON script",
}


class UnknownModel(ValueError):
    pass


def make_provider(model: str, script: object | None = None, *, demo_delay: float = 0.0) -> Provider:
    """The named model; only the demo is slowed down, so that people can watch it stream."""
    if model == "demo":
        return demo_provider(demo_delay)
    if model == "script":
        if script is None:
            raise UnknownModel('model "script" needs a script: {"turns": [...]}')
        return ScriptedProvider(parse_script(script), name="script")
    raise UnknownModel(f"unknown model {model!r}; available: {', '.join(MODELS)}")
