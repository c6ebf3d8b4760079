"""Attachments: the chips' words for what a surface would attach (decided
here, so the window, a browser and the CLI agree), and uploads, for a
browser, which has no paths to give (docs/api.md, "Attachments")."""

from __future__ import annotations

from urllib.parse import unquote

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.core.settings import Settings, SettingsError, load_settings
from server.runtime.runs import RunRequestError
from server.web.api import _json_object, error, refs_of, runs_of

FILENAME_HEADER = "x-sparrow-filename"


def _settings(request: Request) -> Settings:
    try:
        return load_settings(runs_of(request).paths.config_file)
    except SettingsError as exc:
        raise RunRequestError(str(exc)) from exc


async def describe_attachments(request: Request) -> JSONResponse:
    """How each would be sent to ``model`` (or the model of the run ``continue``
    follows; none: decided when the run starts)."""
    # The engine's readers of attachments load at the first use, not with the server.
    from server.runtime.attaching import AttachmentError, describe, images_for

    runs = runs_of(request)
    try:
        data = await _json_object(request)
        refs = refs_of(data)
        model = data.get("model")
        if model is not None and not isinstance(model, str):
            raise RunRequestError("'model' must be a string")
        follows = data.get("continue")
        if not model and isinstance(follows, str):
            info = runs.get(follows)
            model = info.model if info is not None else None
        settings = _settings(request)
        images = images_for(model, data.get("script"), settings)
        judged = describe(refs, runs.paths, settings, images, model or "")
    except (RunRequestError, AttachmentError) as exc:
        return error(400, str(exc))
    return JSONResponse(
        {"attachments": [p.to_dict() | {"ref": ref} for ref, p in zip(refs, judged, strict=True)]}
    )


async def upload(request: Request) -> JSONResponse:
    """The request's body is the file; its name in the ``X-Sparrow-Filename``
    header (percent-encoded). Larger than ``[attachments] upload_limit_bytes``: 413."""
    from server.runtime.attaching import store_upload

    runs = runs_of(request)
    try:
        settings = _settings(request)
    except RunRequestError as exc:
        return error(400, str(exc))
    limit = settings.attachments.upload_limit_bytes
    name = unquote(request.headers.get(FILENAME_HEADER, "")).strip()
    if not name:
        return error(400, f"say the file's name in the {FILENAME_HEADER} header")
    too_large = error(
        413, f"the upload is larger than {limit:,} bytes ([attachments] upload_limit_bytes)"
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return too_large
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:  # a body without a length, or one that lied
                return too_large
    except ClientDisconnect:
        return error(400, "the upload was cut off")
    stored = store_upload(runs.paths, settings, name, bytes(body))
    return JSONResponse({"upload": stored}, status_code=201)


def attachment_routes() -> list[Route]:
    return [
        Route("/api/attachments/describe", describe_attachments, methods=["POST"]),
        Route("/api/uploads", upload, methods=["POST"]),
    ]
