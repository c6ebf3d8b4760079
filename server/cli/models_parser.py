"""The arguments of ``sparrow models`` and ``sparrow keys``: which models there
are, and the providers' API keys."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def add_model_commands(sub: Any, lazy: Callable[[str], Any]) -> None:
    models = sub.add_parser(
        "models",
        help="the models you can use: providers, keys, the default and the routes",
        description="List the providers (with their key state and what they answer), the "
        "models they offer, the default model and the routes.",
    )
    models.add_argument("--json", action="store_true", help="print it as one JSON object")
    models.set_defaults(handler=lazy("models_command"))

    keys = sub.add_parser(
        "keys",
        help="API keys of the model providers, in the OS keyring",
        description="Set, list or remove the API keys of model providers. Keys live in the "
        "OS keyring only (service 'sparrow'); the environment variables work as a fallback.",
    )
    keys_sub = keys.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    key_set = keys_sub.add_parser(
        "set",
        help="store a key (read without echo, or from stdin when not a terminal)",
        description="Store a provider's key in the OS keyring. On a terminal it is read "
        "without echo; otherwise from stdin.",
    )
    key_set.add_argument("provider", metavar="PROVIDER", help="anthropic, openai, openrouter, …")
    key_list = keys_sub.add_parser("list", help="every provider's key state (masked)")
    key_list.add_argument("--json", action="store_true", help="one JSON object per provider")
    key_remove = keys_sub.add_parser("remove", help="remove a provider's key from the keyring")
    key_remove.add_argument("provider", metavar="PROVIDER")
    for each in (key_set, key_list, key_remove):
        each.set_defaults(handler=lazy("keys_command"))
