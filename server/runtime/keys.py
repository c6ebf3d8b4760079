"""Keys as the runtime uses them: the OS keyring first, then the environment
(server/core/credentials.py), with the state Settings and `sparrow keys list`
show. Keyring calls can block on D-Bus: async callers run them in a thread."""

from __future__ import annotations

from dataclasses import dataclass

from server.core import credentials
from server.core.settings import Settings
from server.providers.catalog import key_env_for


def env_names(name: str, settings: Settings) -> tuple[str, ...]:
    own = settings.providers.get(name)
    extra = (own.api_key_env,) if own is not None and own.api_key_env else ()
    return key_env_for(name) + extra


def lookup_key(provider: str, names: tuple[str, ...]) -> tuple[str, str] | None:
    """(key, where it came from), or None when no key is set."""
    found = credentials.find_key(provider, names)
    if found is None:
        return None
    where = "the keyring" if found.source == "keyring" else found.source.removeprefix("env:")
    return found.value, where


@dataclass(frozen=True)
class KeyState:
    state: str  # keyring | env | none
    masked: str
    env: str  # the variable it came from, else the one to use

    def to_dict(self) -> dict[str, str]:
        return {"state": self.state, "masked": self.masked, "env": self.env}


def key_state(provider: str, settings: Settings) -> KeyState:
    names = env_names(provider, settings)
    found = credentials.find_key(provider, names)
    if found is None:
        return KeyState("none", "", names[0])
    if found.source == "keyring":
        return KeyState("keyring", found.masked, names[0])
    return KeyState("env", found.masked, found.source.removeprefix("env:"))
