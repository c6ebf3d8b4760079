"""The sessions' age limit, read-only: it is ``[sessions] keep_days`` in
config.toml, applied when Sparrow starts, so the window shows it and where
to change it (docs/api.md, "Sessions")."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.core.settings import SettingsError, load_settings
from server.web.api import error, runs_of


async def session_settings(request: Request) -> JSONResponse:
    config_file = runs_of(request).paths.config_file
    try:
        settings = load_settings(config_file)
    except SettingsError as exc:
        return error(400, str(exc))
    return JSONResponse({"keep_days": settings.sessions.keep_days, "config_file": str(config_file)})


def retention_routes() -> list[Route]:
    return [Route("/api/settings/sessions", session_settings)]
