"""Models, providers and their keys, and the default model and routes
(docs/api.md, "Models, providers and keys"). A key goes into the OS keyring
and never comes back: only its masked tail."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.core import credentials
from server.core.settings import Settings, SettingsError, load_settings
from server.runtime.model_choice import PreferenceError
from server.runtime.runs import RunRequestError
from server.web.api import _json_object, error, runs_of

if TYPE_CHECKING:
    from server.runtime.model_directory import ModelDirectory


def _directory(request: Request) -> ModelDirectory:
    return runs_of(request).models


def _settings(request: Request) -> Settings:
    return load_settings(runs_of(request).paths.config_file)


async def get_models(request: Request) -> JSONResponse:
    try:
        settings = _settings(request)
    except SettingsError as exc:
        return error(400, str(exc))
    refresh = request.query_params.get("refresh") in ("1", "true")
    return JSONResponse(await _directory(request).overview(settings, refresh=refresh))


async def _provider_change(request: Request, body: dict[str, Any] | None) -> JSONResponse:
    name = request.path_params["name"]
    directory = _directory(request)
    try:
        settings = _settings(request)
        row = await directory.provider(name, settings)  # refuses an unknown name first
        if body is None:
            await anyio.to_thread.run_sync(credentials.remove_key, name)
        else:
            key = body.get("key")
            if not isinstance(key, str) or not key.strip():
                return error(400, "'key' must be the API key, a non-empty string")
            await anyio.to_thread.run_sync(credentials.store_key, name, key.strip())
        directory.forget(name)
        row = await directory.provider(name, settings)
    except (SettingsError, PreferenceError, credentials.CredentialError) as exc:
        return error(400, str(exc))
    return JSONResponse({"provider": row})


async def put_key(request: Request) -> JSONResponse:
    try:
        body = await _json_object(request)
    except RunRequestError as exc:
        return error(400, str(exc))
    return await _provider_change(request, body)


async def delete_key(request: Request) -> JSONResponse:
    return await _provider_change(request, None)


async def test_provider(request: Request) -> JSONResponse:
    try:
        answer = await _directory(request).test(request.path_params["name"], _settings(request))
    except (SettingsError, PreferenceError) as exc:
        return error(400, str(exc))
    return JSONResponse(answer)


async def put_preferences(request: Request) -> JSONResponse:
    directory = _directory(request)
    try:
        body = await _json_object(request)
        settings = _settings(request)
        directory.set_preferences(body, settings)
    except (RunRequestError, SettingsError, PreferenceError) as exc:
        return error(400, str(exc))
    return JSONResponse(await directory.overview(settings))


def model_routes() -> list[Route]:
    return [
        Route("/api/models", get_models),
        Route("/api/providers/{name}/key", put_key, methods=["PUT"]),
        Route("/api/providers/{name}/key", delete_key, methods=["DELETE"]),
        Route("/api/providers/{name}/test", test_provider, methods=["POST"]),
        Route("/api/preferences", put_preferences, methods=["PUT"]),
    ]
