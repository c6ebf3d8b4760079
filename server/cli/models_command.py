"""``sparrow models``: the providers, their keys and what they offer, the
default model and the routes: what a run can use (the window's Settings show
the same, from the same directory)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import anyio

from server.cli.context import fail, open_state
from server.core.settings import SettingsError, load_settings
from server.runtime.model_directory import ModelDirectory


def handle(args: argparse.Namespace) -> int:
    paths, store = open_state()
    try:
        settings = load_settings(paths.config_file)
        overview = anyio.run(_overview, ModelDirectory(store), settings)
    except SettingsError as exc:
        return fail(str(exc), 2)
    finally:
        store.close()
    if args.json:
        print(json.dumps(overview, ensure_ascii=False))
        return 0
    print(render(overview))
    return 0


async def _overview(directory: ModelDirectory, settings: Any) -> dict[str, Any]:
    return await directory.overview(settings, refresh=True)


def _key(row: dict[str, Any]) -> str:
    key = row["key"]
    if key["state"] == "keyring":
        return f"keyring {key['masked']}"
    if key["state"] == "env":
        return f"{key['env']} {key['masked']}"
    return "no key needed" if not row["needs_key"] else f"not set ({key['env']})"


def _state(row: dict[str, Any]) -> str:
    if row["reachable"] is None:
        return "—"
    if not row["reachable"]:
        return row["error"] or "not reachable"
    count = len(row["models"])
    return f"{count} model{'s' if count != 1 else ''}"


def render(overview: dict[str, Any]) -> str:
    rows = overview["providers"]
    keys = [_key(r) for r in rows]
    name_w = max(len(r["name"]) for r in rows)
    key_w = max(len(k) for k in keys)
    url_w = max(len(r["url"]) for r in rows)
    lines = [f"{'PROVIDER':<{name_w}}  {'KEY':<{key_w}}  {'URL':<{url_w}}  STATE"]
    for row, key in zip(rows, keys, strict=True):
        name, url = row["name"], row["url"]
        lines.append(f"{name:<{name_w}}  {key:<{key_w}}  {url:<{url_w}}  {_state(row)}")
    if not overview["keyring"]["ok"]:
        lines.append(f"\nkeyring: {overview['keyring']['reason']}")
    lines.append("")
    lines.append(f"default model: {overview['default'] or '(none: runs use the demo)'}")
    routing = overview["routing"]
    routed = [f"{name.replace('_', ' ')} → {model}" for name, model in routing.items() if model]
    lines.append(f"routing: {'; '.join(routed) if routed else '(none: the default model)'}")
    lines.append("")
    lines.append("models:")
    for model in overview["models"]:
        window = model["context_window"]
        facts = [f"{window:,}-token window" if window else "window unknown"]
        facts.append("priced" if model["priced"] else "cost unknown")
        lines.append(f"  {model['id']:<40}  {', '.join(facts)}")
    return "\n".join(lines)
