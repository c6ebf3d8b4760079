"""What a model can take besides text: images, for now.

Neither the price data nor the endpoints say which models read images, so
Sparrow knows the vendors' own families by model-id prefix, and
``[models] images`` (a table of prefixes: ``"ollama:llava" = true``) says it
for any other model, or overrides what is known. A model not known to take
images gets none: an image it cannot read would fail the request, or worse,
be silently dropped."""

from __future__ import annotations

from typing import Final

from server.core.settings import ModelSettings

# The families that read images, as their vendors document them.
KNOWN_IMAGE_MODELS: Final[dict[str, bool]] = {
    "anthropic:claude-3": True,
    "anthropic:claude-opus-4": True,
    "anthropic:claude-sonnet-4": True,
    "anthropic:claude-haiku-4": True,
    "openai:gpt-4o": True,
    "openai:gpt-4.1": True,
    "openai:gpt-5": True,
    "openai:o3": True,
    "openai:o4": True,
    "openrouter:anthropic/claude": True,
    "openrouter:openai/gpt-4o": True,
    "openrouter:openai/gpt-4.1": True,
    "openrouter:openai/gpt-5": True,
    "openrouter:google/gemini": True,
}

IMAGES_SETTING = "[models] images"


def accepts_images(model_id: str, settings: ModelSettings) -> bool:
    """Whether ``model_id`` (``provider:model``) is sent image parts."""
    own = _prefixed(settings.images, model_id)
    if own is not None:
        return bool(own)
    return bool(_prefixed(KNOWN_IMAGE_MODELS, model_id))


def _prefixed(table: dict[str, bool], model_id: str) -> bool | None:
    # Only full ids here: "claude" alone would match another provider's model name.
    best = max((p for p in table if model_id.startswith(p)), key=len, default=None)
    return table[best] if best is not None else None
