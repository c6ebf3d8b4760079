"""What models a user has: every provider with its key state and what it
offers, the default model and the routes (``GET /api/models``,
``sparrow models``). Local servers are looked for at every call (one that
is not running refuses at once); cloud providers are asked only when they
have a key, and their answer is kept for a minute."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Final

import anyio

from server.core import credentials
from server.core.settings import TASK_CLASSES, Settings
from server.engine.store import Store
from server.providers.catalog import BUILTIN, ProviderInfo
from server.providers.discovery import Offer, list_models
from server.providers.endpoints import Endpoint, providers, resolve
from server.providers.pricing import model_facts
from server.providers.registry import SCRIPTED_MODELS
from server.runtime.keys import key_state, lookup_key
from server.runtime.model_choice import (
    DEFAULT_MODEL_KEY,
    ROUTE_KEY,
    PreferenceError,
    default_model,
    routes,
)

CLOUD_CACHE_SECONDS: Final = 60.0


@dataclass
class _Cached:
    offer: Offer
    at: float
    key: str  # the masked tail it was asked with: a new key asks again


class ModelDirectory:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._cloud: dict[str, _Cached] = {}

    def forget(self, name: str) -> None:
        self._cloud.pop(name, None)

    async def overview(self, settings: Settings, *, refresh: bool = False) -> dict[str, Any]:
        table = providers(settings)
        status = await anyio.to_thread.run_sync(credentials.keyring_status)
        found: dict[str, tuple[dict[str, Any], Endpoint]] = {}

        async def look(info: ProviderInfo) -> None:
            found[info.name] = await self._provider(info, settings, refresh)

        async with anyio.create_task_group() as tg:
            for info in table.values():
                tg.start_soon(look, info)
        ordered = [found[name] for name in table]
        return {
            "default": default_model(self.store, settings),
            "routing": routes(self.store, settings),
            "providers": [row for row, _ in ordered],
            "models": self._models(ordered, settings),
            "keyring": {"ok": status.ok} if status.ok else {"ok": False, "reason": status.reason},
        }

    async def provider(self, name: str, settings: Settings) -> dict[str, Any]:
        """One provider as the overview shows it."""
        row, _ = await self._provider(_known(name, settings), settings, refresh=True)
        return row

    async def _provider(
        self, info: ProviderInfo, settings: Settings, refresh: bool
    ) -> tuple[dict[str, Any], Endpoint]:
        state = await anyio.to_thread.run_sync(key_state, info.name, settings)
        endpoint = await self._endpoint(info.name, settings)
        row: dict[str, Any] = {
            "name": info.name,
            "label": info.label,
            "kind": info.kind,
            "url": endpoint.shown_url,
            "local": info.local,
            "needs_key": info.needs_key,
            "key": state.to_dict(),
            "reachable": None,
            "error": "",
            "models": list(endpoint.models),
            "windows": {},
        }
        if info.needs_key and state.state == "none":
            return row, endpoint
        offer = await self._offer(endpoint, state.masked, refresh)
        row.update(
            reachable=offer.reachable,
            error=offer.error,
            models=offer.models,
            windows=offer.windows,
        )
        return row, endpoint

    async def _endpoint(self, name: str, settings: Settings) -> Endpoint:
        endpoint, _ = await anyio.to_thread.run_sync(
            lambda: resolve(f"{name}:-", settings, lookup_key, require_key=False)
        )
        return endpoint

    async def _offer(self, endpoint: Endpoint, masked: str, refresh: bool) -> Offer:
        if endpoint.local:
            return await list_models(endpoint)
        cached = self._cloud.get(endpoint.name)
        if (
            cached is not None
            and not refresh
            and cached.key == masked
            and time.monotonic() - cached.at < CLOUD_CACHE_SECONDS
        ):
            return cached.offer
        offer = await list_models(endpoint)
        self._cloud[endpoint.name] = _Cached(offer, time.monotonic(), masked)
        return offer

    def _models(
        self, found: list[tuple[dict[str, Any], Endpoint]], settings: Settings
    ) -> list[dict[str, Any]]:
        models: list[dict[str, Any]] = [
            {
                "id": "demo",
                "label": SCRIPTED_MODELS["demo"],
                "provider": "demo",
                "local": True,
                "context_window": None,
                "priced": False,
            }
        ]
        for row, endpoint in found:
            if not row["reachable"]:
                continue
            builtin = BUILTIN.get(row["name"])
            for name in row["models"]:
                model_id = f"{row['name']}:{name}"
                facts = model_facts(
                    model_id,
                    settings,
                    price_id=endpoint.price_id,
                    reported_window=row["windows"].get(name),
                    known_price_id=builtin.price_id if builtin else None,
                )
                models.append(
                    {
                        "id": model_id,
                        "label": name,
                        "provider": row["name"],
                        "local": row["local"],
                        "context_window": facts.context_window,
                        "priced": facts.pricer is not None,
                    }
                )
        return models

    async def test(self, name: str, settings: Settings) -> dict[str, Any]:
        _known(name, settings)
        self.forget(name)
        endpoint = await self._endpoint(name, settings)
        state = await anyio.to_thread.run_sync(key_state, name, settings)
        if endpoint.name in BUILTIN and BUILTIN[name].needs_key and state.state == "none":
            return {
                "ok": False,
                "message": f"no API key for {endpoint.label}: set one first",
                "models": [],
            }
        offer = await self._offer(endpoint, state.masked, refresh=True)
        if not offer.reachable:
            return {"ok": False, "message": offer.error, "models": []}
        count = len(offer.models)
        return {
            "ok": True,
            "message": f"{endpoint.label} answered at {endpoint.shown_url}: "
            f"{count} model{'s' if count != 1 else ''}",
            "models": offer.models,
        }

    def set_preferences(self, body: dict[str, Any], settings: Settings) -> None:
        """The default model and routes as the window sets them (None forgets one)."""
        known = set(providers(settings)) | set(SCRIPTED_MODELS)
        changes: dict[str, str | None] = {}
        if "default_model" in body:
            changes[DEFAULT_MODEL_KEY] = _model_id(body["default_model"], known, "default_model")
        route_body = body.get("routing", {})
        if not isinstance(route_body, dict):
            raise PreferenceError("'routing' must be an object of task class -> model id")
        for name, value in route_body.items():
            if name not in TASK_CLASSES:
                raise PreferenceError(
                    f"unknown task class {name!r}; known: {', '.join(TASK_CLASSES)}"
                )
            changes[ROUTE_KEY.format(name)] = _model_id(value, known, f"routing.{name}")
        for key, value in changes.items():
            self.store.set_preference(key, value)


def _known(name: str, settings: Settings) -> ProviderInfo:
    table = providers(settings)
    if name not in table:
        raise PreferenceError(f"no provider {name!r}; known: {', '.join(sorted(table))}")
    return table[name]


def _model_id(value: object, known: set[str], where: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise PreferenceError(f"'{where}' must be a model id such as anthropic:claude-sonnet-4-6")
    provider = value.partition(":")[0]
    if value not in SCRIPTED_MODELS and (":" not in value or provider not in known):
        raise PreferenceError(
            f"'{where}': {value!r} is not a model id of a known provider "
            f"({', '.join(sorted(known - set(SCRIPTED_MODELS)))})"
        )
    return value
