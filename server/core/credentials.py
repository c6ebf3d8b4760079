"""API keys: the OS keyring only (service ``sparrow``, one entry per provider),
then the environment as a fallback, shown as such. Never a file: where no
secure store exists, Sparrow says so and names the variable to use.

Every key read or stored is registered for redaction. Keyring calls can block
on D-Bus: async callers run them in a worker thread."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from server.core.redaction import register_secret

SERVICE: Final = "sparrow"
# Backends that only pretend to keep a secret, or keep it in a plain file.
_NOT_SECURE: Final = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")


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
        """A short tail to tell keys apart, never more: nothing for a short key."""
        return f"…{self.value[-4:]}" if len(self.value) >= 16 else "…"


@dataclass(frozen=True)
class KeyringStatus:
    ok: bool
    reason: str = ""


def _why_none() -> str:
    if sys.platform.startswith("linux") and not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return (
            "there is no D-Bus session, so the Secret Service (GNOME Keyring, KWallet) "
            "cannot be reached"
        )
    return "no keyring backend is available on this system"


def _backend() -> Any:
    """The keyring backend, or NoSecureStore when it is not a secure store."""
    import keyring

    backend = keyring.get_keyring()
    parts = [backend, *getattr(backend, "backends", [])]
    secure = [b for b in parts if not type(b).__module__.startswith(_NOT_SECURE)]
    if not secure or (hasattr(backend, "backends") and not backend.backends):
        raise NoSecureStore(f"no secure store for keys: {_why_none()}")
    return backend


def _plain(exc: Exception) -> str:
    """A keyring failure in a user's words."""
    name = type(exc).__name__
    text = str(exc) or name
    if name == "KeyringLocked" or "locked" in text.lower():
        return "the keyring is locked: unlock it (log in to the desktop session)"
    if "Prompt dismissed" in text or name == "InitError":
        return "the keyring asked to be unlocked and the prompt was dismissed"
    return f"the keyring failed: {text}"


def keyring_status() -> KeyringStatus:
    try:
        backend = _backend()
        backend.get_password(SERVICE, "__sparrow_probe__")
    except NoSecureStore as exc:
        return KeyringStatus(False, str(exc))
    except Exception as exc:
        return KeyringStatus(False, _plain(exc))
    return KeyringStatus(True)


def _stored(provider: str) -> str | None:
    try:
        value: str | None = _backend().get_password(SERVICE, provider)
    except Exception:
        return None  # no keyring, or a locked one: the environment may still have it
    return value


def find_key(provider: str, env_names: Iterable[str]) -> Credential | None:
    """The key of ``provider``: the keyring's, else the first variable set."""
    value = _stored(provider)
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


def check_key(value: str) -> str:
    """The key as it will be stored, or CredentialError naming what is wrong."""
    key = value.strip()
    if not key:
        raise CredentialError("the key is empty")
    if any(c.isspace() for c in key):
        raise CredentialError("the key has spaces or line breaks inside: paste just the key")
    return key


def store_key(provider: str, value: str) -> None:
    key = check_key(value)
    register_secret(key)
    backend = _backend()
    try:
        backend.set_password(SERVICE, provider, key)
    except Exception as exc:
        raise CredentialError(f"the key was not stored: {_plain(exc)}") from exc


def remove_key(provider: str) -> bool:
    """Forget ``provider``'s key; False when the keyring held none."""
    from keyring.errors import PasswordDeleteError

    backend = _backend()
    try:
        backend.delete_password(SERVICE, provider)
    except PasswordDeleteError:
        return False
    except Exception as exc:
        raise CredentialError(f"the key was not removed: {_plain(exc)}") from exc
    return True
