"""Which models get image parts: the vendors' families Sparrow knows, and
``[models] images`` for any other (or to say otherwise)."""

from __future__ import annotations

from server.core.settings import ModelSettings
from server.providers.capabilities import accepts_images


def test_known_families_take_images_and_unknown_models_do_not() -> None:
    plain = ModelSettings()
    assert accepts_images("anthropic:claude-sonnet-4-6", plain)
    assert accepts_images("openai:gpt-4o-mini", plain)
    assert not accepts_images("openai:gpt-3.5-turbo", plain)
    assert not accepts_images("ollama:qwen3:8b", plain)
    # A name that only looks like a family elsewhere is not taken for it.
    assert not accepts_images("ollama:claude-sonnet-4-copy", plain)


def test_the_setting_says_it_for_any_model_and_overrides_what_is_known() -> None:
    own = ModelSettings(images={"ollama:llava": True, "anthropic:claude-3-5-haiku": False})
    assert accepts_images("ollama:llava:13b", own)
    assert not accepts_images("anthropic:claude-3-5-haiku-latest", own)
    assert accepts_images("anthropic:claude-3-opus", own)
