"""The model providers Sparrow knows without being told: which wire format each
speaks, where it answers, where its key comes from, and whether its prices
are the vendor's own. ``[providers.NAME]`` in config.toml adds endpoints or
moves these (``base_url``, ``kind``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

# The wire formats an endpoint can speak, as ``kind`` in [providers.NAME].
Kind = Literal["anthropic", "openai", "openai-chat"]
KINDS: Final[tuple[Kind, ...]] = ("anthropic", "openai", "openai-chat")


@dataclass(frozen=True)
class ProviderInfo:
    name: str  # the prefix of model ids: "anthropic" in "anthropic:claude-sonnet-4-6"
    label: str
    kind: Kind
    # None: the vendor's own address (its SDK honours ANTHROPIC_BASE_URL / OPENAI_BASE_URL).
    base_url: str | None
    # Environment variables that may hold the key, first found wins (after the keyring).
    key_env: tuple[str, ...] = ()
    needs_key: bool = True
    # A server on this machine: looked for when no key is set, never priced.
    local: bool = False
    # The genai-prices provider whose prices apply, when the endpoint is the vendor's.
    price_id: str | None = None


BUILTIN: Final[dict[str, ProviderInfo]] = {
    info.name: info
    for info in (
        ProviderInfo(
            "anthropic", "Anthropic", "anthropic", None, ("ANTHROPIC_API_KEY",),
            price_id="anthropic",
        ),
        ProviderInfo(
            "openai", "OpenAI", "openai", None, ("OPENAI_API_KEY",), price_id="openai"
        ),
        ProviderInfo(
            "openrouter", "OpenRouter", "openai-chat", "https://openrouter.ai/api/v1",
            ("OPENROUTER_API_KEY",), price_id="openrouter",
        ),
        ProviderInfo(
            "ollama", "Ollama", "openai-chat", "http://localhost:11434/v1",
            needs_key=False, local=True,
        ),
        ProviderInfo(
            "llamacpp", "llama.cpp server", "openai-chat", "http://127.0.0.1:8080/v1",
            needs_key=False, local=True,
        ),
        ProviderInfo(
            "lmstudio", "LM Studio", "openai-chat", "http://localhost:1234/v1",
            needs_key=False, local=True,
        ),
        ProviderInfo(
            "vllm", "vLLM", "openai-chat", "http://localhost:8000/v1",
            needs_key=False, local=True,
        ),
    )
}


def key_env_for(name: str) -> tuple[str, ...]:
    """Where the environment may hold ``name``'s key: the vendor's own variable for a
    built-in provider, ``SPARROW_<NAME>_API_KEY`` for any provider."""
    own = BUILTIN[name].key_env if name in BUILTIN else ()
    return (*own, f"SPARROW_{name.upper().replace('-', '_')}_API_KEY")
