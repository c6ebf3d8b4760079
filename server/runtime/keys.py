"""The key a provider's requests carry: the OS keyring first, then the
environment (server/core/credentials.py)."""

from __future__ import annotations

import os


def lookup_key(provider: str, env_names: tuple[str, ...]) -> tuple[str, str] | None:
    """(key, where it came from), or None when no key is set."""
    for name in env_names:
        value = os.environ.get(name, "").strip()
        if value:
            return value, name
    return None
