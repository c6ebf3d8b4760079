"""``sparrow keys set|list|remove PROVIDER``: API keys in the OS keyring.

``set`` reads the key without echo on a terminal, or from stdin otherwise;
no key is ever printed, only a masked tail."""

from __future__ import annotations

import argparse
import getpass
import json
import sys

from server.cli.context import fail, open_state
from server.core import credentials
from server.core.settings import Settings, SettingsError, load_settings
from server.providers.endpoints import ModelIdError, providers
from server.runtime.keys import env_names, key_state


def _settings() -> Settings:
    paths, store = open_state()
    store.close()
    return load_settings(paths.config_file)


def handle(args: argparse.Namespace) -> int:
    try:
        settings = _settings()
        known = providers(settings)
    except (SettingsError, ModelIdError) as exc:
        return fail(str(exc), 2)
    if args.keys_action == "list":
        return _list(settings, {n: i.needs_key for n, i in known.items()}, args.json)
    name = args.provider
    if name not in known:
        return fail(f"unknown provider {name!r}; known: {', '.join(sorted(known))}", 2)
    variable = env_names(name, settings)[0]
    try:
        if args.keys_action == "set":
            return _set(name, variable)
        removed = credentials.remove_key(name)
    except credentials.NoSecureStore as exc:
        return fail(_use_env(str(exc), variable), 2)
    except credentials.CredentialError as exc:
        return fail(str(exc), 1)
    print(f"removed the {name} key from the keyring" if removed else f"no {name} key was stored")
    return 0


def _use_env(reason: str, variable: str) -> str:
    return f"{reason}. Sparrow never writes a key to a file: export {variable}=… instead"


def _read_key(name: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(f"{name} API key (not shown): ")
    return sys.stdin.read()


def _set(name: str, variable: str) -> int:
    status = credentials.keyring_status()
    if not status.ok:
        return fail(_use_env(status.reason, variable), 2)
    try:
        key = credentials.check_key(_read_key(name))
    except credentials.CredentialError as exc:
        return fail(f"{exc}; nothing was stored", 2)
    except (EOFError, KeyboardInterrupt):
        return fail("no key given; nothing was stored", 2)
    credentials.store_key(name, key)
    masked = credentials.Credential(name, key, "keyring").masked
    print(f"stored the {name} key in the OS keyring ({masked})")
    return 0


def _list(settings: Settings, names: dict[str, bool], as_json: bool) -> int:
    """``names``: each provider, and whether it needs a key."""
    status = credentials.keyring_status()
    states = {name: key_state(name, settings) for name in names}
    if as_json:
        for name, state in states.items():
            print(json.dumps({"provider": name, **state.to_dict()}))
        return 0
    width = max(len(n) for n in names)
    for name, state in states.items():
        if state.state == "keyring":
            shown = f"keyring {state.masked}"
        elif state.state == "env":
            shown = f"{state.env} {state.masked} (environment)"
        elif names[name]:
            shown = f"not set (sparrow keys set {name}, or {state.env})"
        else:
            shown = "no key needed"
        print(f"{name:<{width}}  {shown}")
    if not status.ok:
        print(f"\nthe keyring is not available: {status.reason}", file=sys.stderr)
    return 0
