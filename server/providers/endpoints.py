"""From a model id (``provider:model``) to the endpoint that serves it: wire
format, address, key, and whether the vendor's prices apply.

Model ids split at the first colon, so ``ollama:qwen3:8b`` is Ollama's model
``qwen3:8b``. Providers are the built-in ones (catalog.py) and the user's
``[providers.NAME]`` tables, which may also move a built-in one."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from server.core.settings import Settings
from server.providers.catalog import BUILTIN, Kind, ProviderInfo, key_env_for

# The scripted models, which need no endpoint.
SCRIPTED: Final = ("demo", "script")
# The vendors' own addresses: only there do their prices apply.
VENDOR_HOSTS: Final = {"anthropic": "api.anthropic.com", "openai": "api.openai.com"}
VENDOR_URLS: Final = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
BASE_URL_ENV: Final = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
# An OpenAI-compatible client must send some key; local servers ignore it.
NO_KEY: Final = "sparrow-no-key"

# (provider, environment variables) -> (key, where it came from), or None.
KeyLookup = Callable[[str, tuple[str, ...]], "tuple[str, str] | None"]


class ModelIdError(ValueError):
    """A model id that names no provider Sparrow knows, or is not ``provider:model``."""


class MissingKey(ValueError):
    """The provider needs a key and none is set; the message says how to set one."""


@dataclass(frozen=True)
class Endpoint:
    name: str
    label: str
    kind: Kind
    base_url: str | None  # None: the vendor's own address
    local: bool = False
    key_source: str = ""  # "the keyring", "ANTHROPIC_API_KEY", … ("" without a key)
    price_id: str | None = None  # genai-prices provider, only at the vendor's own address
    context_window: int = 0  # configured for its models (0: not said)
    models: tuple[str, ...] = ()  # configured, for endpoints that list none
    # Some key is always sent: the SDKs refuse to start without one; local servers ignore it.
    api_key: str = field(default=NO_KEY, repr=False)

    @property
    def shown_url(self) -> str:
        return self.base_url or VENDOR_URLS.get(self.name, "")


def split_model_id(model_id: str) -> tuple[str, str]:
    provider, sep, model = model_id.strip().partition(":")
    if not sep or not provider or not model:
        raise ModelIdError(
            f"{model_id!r} is not a model id: write provider:model, e.g. "
            "anthropic:claude-sonnet-4-6, openai:gpt-5 or ollama:qwen3:8b"
            + _guess(model_id)
        )
    return provider, model


def _guess(model: str) -> str:
    name = model.strip().lower()
    for prefix, provider in (("claude", "anthropic"), ("gpt", "openai"), ("o3", "openai")):
        if name.startswith(prefix):
            return f" (did you mean {provider}:{model.strip()}?)"
    return ""


def providers(settings: Settings) -> dict[str, ProviderInfo]:
    """Every provider: the built-in ones as the settings move them, then the user's own."""
    table = dict(BUILTIN)
    for name, own in settings.providers.items():
        base = table.get(name)
        if base is None:
            if not own.kind or not own.base_url:
                raise ModelIdError(
                    f"[providers.{name}] needs base_url and kind "
                    "(anthropic, openai or openai-chat)"
                )
            # An endpoint of the user's own gets a key when one is set for it, and
            # goes without otherwise (many self-hosted servers take none).
            local = _is_loopback(own.base_url)
            base = ProviderInfo(name, name, own.kind, own.base_url, needs_key=False, local=local)  # type: ignore[arg-type]
        table[name] = ProviderInfo(
            name=name,
            label=own.label or base.label,
            kind=own.kind or base.kind,  # type: ignore[arg-type]
            base_url=own.base_url or base.base_url,
            key_env=base.key_env,
            needs_key=base.needs_key,
            local=base.local if not own.base_url else _is_loopback(own.base_url),
            price_id=base.price_id,
        )
    return table


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def _base_url(info: ProviderInfo, settings: Settings, env: Mapping[str, str]) -> str | None:
    own = settings.providers.get(info.name)
    if own is not None and own.base_url:
        return own.base_url.rstrip("/")
    variable = BASE_URL_ENV.get(info.name)
    if variable and env.get(variable):
        return env[variable].rstrip("/")
    if info.name == "ollama" and env.get("OLLAMA_HOST"):
        host = env["OLLAMA_HOST"]
        if "://" not in host:
            host = f"http://{host}"
        return host.rstrip("/") + "/v1"
    return info.base_url


def _price_id(info: ProviderInfo, base_url: str | None) -> str | None:
    """Prices apply only where the endpoint is the vendor's own: a proxy or a
    local server that speaks the same format may charge anything, or nothing."""
    if info.price_id is None:
        return None
    vendor_host = VENDOR_HOSTS.get(info.name)
    if base_url is None:
        return info.price_id
    if vendor_host is not None:
        return info.price_id if urlsplit(base_url).hostname == vendor_host else None
    return info.price_id if base_url == BUILTIN[info.name].base_url else None


def resolve(
    model_id: str,
    settings: Settings,
    keys: KeyLookup,
    env: Mapping[str, str] | None = None,
    *,
    require_key: bool = True,
) -> tuple[Endpoint, str]:
    """The endpoint of ``model_id`` with its key, and the model's name there.
    ``require_key=False``: the endpoint even without one (to show it)."""
    env = os.environ if env is None else env
    name, model = split_model_id(model_id)
    table = providers(settings)
    info = table.get(name)
    if info is None:
        raise ModelIdError(
            f"unknown provider {name!r} in {model_id!r}: known providers are "
            f"{', '.join(sorted(table))}; add your own under [providers.{name}] in "
            "config.toml with base_url and kind"
        )
    own = settings.providers.get(name)
    env_names = key_env_for(name) + ((own.api_key_env,) if own and own.api_key_env else ())
    found = keys(name, env_names)
    if found is None and info.needs_key and require_key:
        raise MissingKey(
            f"no API key for {info.label}: set one with `sparrow keys set {name}` "
            f"(or in Settings), or export {env_names[0]}"
        )
    base_url = _base_url(info, settings, env)
    key, source = found if found is not None else (NO_KEY, "")
    endpoint = Endpoint(
        name=name,
        label=info.label,
        kind=info.kind,
        base_url=base_url,
        local=info.local,
        key_source=source,
        price_id=_price_id(info, base_url),
        context_window=own.context_window if own else 0,
        models=tuple(own.models) if own else (),
        api_key=key,
    )
    return endpoint, model
