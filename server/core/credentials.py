"""API keys: the OS keyring only (service ``sparrow``, one entry per provider),
then the environment as a fallback. Never a file.

(A first cut; the full module, with redaction of every key read, lands from
the credentials branch.)"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from server.core.redaction import register_secret

SERVICE = "sparrow"


class CredentialError(Exception):
    """A key that cannot be stored or removed; the message says why and what to do."""


class NoSecureStore(CredentialError):
    """No keyring backend: Sparrow never falls back to a plaintext file."""


@dataclass(frozen=True)
class Credential:
    provider: str
    value: str = field(repr=False)
    source: str  # "keyring" or "env:NAME"

    @property
    def masked(self) -> str:
        return f"…{self.value[-4:]}" if len(self.value) >= 12 else "…"


@dataclass(frozen=True)
class KeyringStatus:
    ok: bool
    reason: str = ""


def _keyring() -> object:
    import keyring
    from keyring.backends import fail

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        raise NoSecureStore("no secure store for keys (no keyring backend is available)")
    return backend


def keyring_status() -> KeyringStatus:
    try:
        _keyring()
    except NoSecureStore as exc:
        return KeyringStatus(False, str(exc))
    except Exception as exc:  # a D-Bus error, a locked keyring
        return KeyringStatus(False, f"the keyring cannot be used: {exc}")
    return KeyringStatus(True)


def find_key(provider: str, env_names: tuple[str, ...]) -> Credential | None:
    try:
        import keyring

        _keyring()
        value = keyring.get_password(SERVICE, provider)
    except Exception:
        value = None
    if value:
        register_secret(value)
        return Credential(provider, value, "keyring")
    for name in env_names:
        env = os.environ.get(name, "").strip()
        if env:
            register_secret(env)
            return Credential(provider, env, f"env:{name}")
    return None


def register_env_keys(env_names: Iterable[str]) -> None:
    """Every key the environment holds for a provider is blanked from now on,
    used or not: a tool's output could still print one."""
    for name in env_names:
        register_secret(os.environ.get(name, "").strip())


def store_key(provider: str, value: str) -> None:
    import keyring

    _keyring()
    register_secret(value)
    try:
        keyring.set_password(SERVICE, provider, value)
    except Exception as exc:
        raise CredentialError(f"the key could not be stored in the keyring: {exc}") from exc


def remove_key(provider: str) -> bool:
    import keyring
    from keyring.errors import PasswordDeleteError

    _keyring()
    try:
        keyring.delete_password(SERVICE, provider)
    except PasswordDeleteError:
        return False
    return True
