"""What an endpoint offers: its models (and, where it says, their context
windows), asked through the vendor's own SDK with the key a run would use.
It is how Settings tests a connection, how the window finds local servers,
and how ``sparrow models`` knows what is reachable."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import anyio

from server.providers.endpoints import Endpoint
from server.providers.failures import cannot_connect, classify

# A local server that is running answers at once; a cloud API within seconds.
LOCAL_TIMEOUT: Final = 1.5
CLOUD_TIMEOUT: Final = 8.0
MODELS_SHOWN: Final = 200


@dataclass(frozen=True)
class Offer:
    reachable: bool
    models: list[str] = field(default_factory=list)
    windows: dict[str, int] = field(default_factory=dict)  # what the endpoint reports
    error: str = ""  # one line: what failed and the fix


def import_clients() -> None:
    """The SDKs and pydantic-ai's error categories (~1 s, the first time): imported in
    a worker thread before an endpoint is asked, so the event loop never waits on it."""
    import anthropic  # noqa: F401
    import openai  # noqa: F401
    import pydantic_ai.exceptions  # noqa: F401


async def list_models(endpoint: Endpoint) -> Offer:
    wait = LOCAL_TIMEOUT if endpoint.local else CLOUD_TIMEOUT
    if endpoint.local:
        # Most local servers a user could run are not running: that is told by a
        # refused connection, without loading the SDKs (a second and ~70 MB, on
        # the window's first page).
        refused = await anyio.to_thread.run_sync(_refused, endpoint, wait)
        if refused:
            reason = cannot_connect(endpoint, refused).message
            return Offer(False, list(endpoint.models), error=reason)
    await anyio.to_thread.run_sync(import_clients)
    try:
        if endpoint.kind == "anthropic":
            offer = await _anthropic_models(endpoint, wait)
        else:
            offer = await _openai_models(endpoint, wait)
    except Exception as exc:
        return Offer(False, list(endpoint.models), error=_reason(exc, endpoint))
    if not offer.models and endpoint.models:
        return Offer(True, list(endpoint.models), offer.windows)
    return offer


def _refused(endpoint: Endpoint, wait: float) -> str:
    """Why nothing listens at the endpoint's address ("" when something does, or
    when it cannot be told without asking: the SDK's answer then says why)."""
    parts = urlsplit(endpoint.base_url or "")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return ""
    if not parts.hostname:
        return ""
    try:
        socket.create_connection((parts.hostname, port), timeout=wait).close()
    except OSError as exc:
        # A timeout, or a name that does not resolve: the SDK's answer says it.
        if isinstance(exc, TimeoutError | socket.gaierror) or not exc.errno or exc.errno < 0:
            return ""
        return os.strerror(exc.errno).lower()
    return ""


def _reason(exc: Exception, endpoint: Endpoint) -> str:
    """The SDK's error in the words a failed run would use."""
    return classify(_as_model_error(exc, endpoint), endpoint, "").message


def _as_model_error(exc: Exception, endpoint: Endpoint) -> Exception:
    """The SDK's exception as pydantic-ai's category, so that one table of
    messages (failures.py) serves a run and a connection test alike."""
    from pydantic_ai import exceptions as ex

    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    name = endpoint.label
    if status in (401, 403):
        return ex.ModelAuthenticationError(name, str(exc), body=body)
    if status == 404:
        return ex.ModelNotFoundError(name, str(exc), body=body)
    if status == 429:
        return ex.ModelRateLimitError(name, str(exc), body=body)
    if isinstance(status, int) and status >= 500:
        return ex.ModelServerError(name, str(exc), body=body)
    if type(exc).__name__ in ("APIConnectionError", "APITimeoutError", "ConnectError"):
        error = ex.ModelConnectionError(name, str(exc), phase="connect")
        error.__cause__ = exc.__cause__ or exc
        return error
    if isinstance(status, int):
        return ex.ModelRequestRejectedError(name, str(exc), body=body)
    return exc


async def _anthropic_models(endpoint: Endpoint, wait: float) -> Offer:
    from anthropic import AsyncAnthropic

    async with AsyncAnthropic(
        api_key=endpoint.api_key, base_url=endpoint.base_url, max_retries=0, timeout=wait
    ) as client:
        models, windows = [], {}
        async for info in client.models.list(limit=100):
            models.append(info.id)
            if info.max_input_tokens:
                windows[info.id] = int(info.max_input_tokens)
            if len(models) >= MODELS_SHOWN:
                break
    return Offer(True, models, windows)


async def _openai_models(endpoint: Endpoint, wait: float) -> Offer:
    from openai import AsyncOpenAI

    async with AsyncOpenAI(
        api_key=endpoint.api_key, base_url=endpoint.base_url, max_retries=0, timeout=wait
    ) as client:
        models, windows = [], {}
        async for item in client.models.list():
            models.append(item.id)
            window = _reported_window(item.model_extra or {})
            if window:
                windows[item.id] = window
            if len(models) >= MODELS_SHOWN:
                break
        if endpoint.local and len(models) == 1 and not windows:
            served = await _llama_cpp_window(client, endpoint)
            if served:
                windows[models[0]] = served
    return Offer(True, sorted(models) if endpoint.name != "openai" else models, windows)


def _reported_window(extra: dict[str, Any]) -> int | None:
    """vLLM says ``max_model_len``; LM Studio ``max_context_length``."""
    for key in ("max_model_len", "max_context_length", "context_length"):
        value = extra.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


async def _llama_cpp_window(client: Any, endpoint: Endpoint) -> int | None:
    """llama.cpp's server says the context it was started with (``-c``) at
    /props; the model's training length in /v1/models is not what it serves."""
    if endpoint.base_url is None:
        return None
    parts = urlsplit(endpoint.base_url)
    root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    try:
        response = await client.get(f"{root}/props", cast_to=object)
    except Exception:
        return None
    if not isinstance(response, dict):
        return None
    settings = response.get("default_generation_settings")
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else response.get("n_ctx")
    return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None
