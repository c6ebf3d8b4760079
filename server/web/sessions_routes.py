"""Sessions: the paged list, search, one session with its runs, delete,
export and resume (docs/api.md, "Sessions")."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from server.engine.store import SessionInfo
from server.engine.store.session_queries import BadCursor
from server.runtime.runs import RunManager, RunRequestError
from server.runtime.session_export import FORMATS, export
from server.runtime.sessions import NoSuchSession, SessionRunning, delete_session, resume_request
from server.web.api import _json_object, _string, error, refs_of, run_dict, runs_of

PAGE = 50
MAX_PAGE = 200
MAX_QUERY_CHARS = 500


class BadParameter(ValueError):
    pass


def _limit(request: Request, default: int) -> int:
    raw = request.query_params.get("limit")
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadParameter(f"limit must be a whole number, not {raw[:20]!r}") from None
    if not 1 <= value <= MAX_PAGE:
        raise BadParameter(f"limit must be from 1 to {MAX_PAGE}")
    return value


def session_dict(runs: RunManager, info: SessionInfo) -> dict[str, Any]:
    return info.to_dict() | {"last_run": run_dict(runs, info.last_run)}


async def list_sessions(request: Request) -> JSONResponse:
    runs = runs_of(request)
    try:
        sessions, following = runs.store.sessions_page(
            workspace=request.query_params.get("workspace") or None,
            cursor=request.query_params.get("cursor") or None,
            limit=_limit(request, PAGE),
        )
    except (BadParameter, BadCursor) as exc:
        return error(400, str(exc))
    return JSONResponse({"sessions": [session_dict(runs, s) for s in sessions], "next": following})


async def search_sessions(request: Request) -> JSONResponse:
    query = request.query_params.get("q", "")
    if len(query) > MAX_QUERY_CHARS:
        return error(400, f"the search is longer than {MAX_QUERY_CHARS} characters")
    try:
        limit = _limit(request, 20)
    except BadParameter as exc:
        return error(400, str(exc))
    hits = runs_of(request).store.search_sessions(query, limit)
    return JSONResponse({"results": [hit.to_dict() for hit in hits]})


async def get_session(request: Request) -> JSONResponse:
    runs = runs_of(request)
    session_id = request.path_params["session_id"]
    info = runs.store.session_info(session_id)
    if info is None:
        return error(404, str(NoSuchSession(session_id)))
    body = session_dict(runs, info)
    body["runs"] = [run_dict(runs, r) for r in runs.store.session_runs(session_id)]
    return JSONResponse(body)


async def remove_session(request: Request) -> JSONResponse:
    runs = runs_of(request)
    session_id = request.path_params["session_id"]
    try:
        checkpoints = delete_session(runs.paths, runs.store, session_id)
    except NoSuchSession as exc:
        return error(404, str(exc))
    except SessionRunning as exc:
        return error(409, str(exc))
    return JSONResponse({"deleted": session_id, "checkpoints": checkpoints})


async def export_session(request: Request) -> Response:
    runs = runs_of(request)
    session_id = request.path_params["session_id"]
    fmt = request.query_params.get("format", "md")
    if fmt not in FORMATS:
        return error(400, f"format must be md or json, not {fmt[:20]!r}")
    info = runs.store.session_info(session_id)
    if info is None:
        return error(404, str(NoSuchSession(session_id)))
    media = "application/json" if fmt == "json" else "text/markdown; charset=utf-8"
    return StreamingResponse(
        export(info, runs.store.session_runs(session_id), fmt),
        media_type=media,
        headers={"Content-Disposition": f'attachment; filename="{session_id}.{fmt}"'},
    )


async def resume_session(request: Request) -> JSONResponse:
    runs = runs_of(request)
    try:
        data = await _json_object(request)
        run_request = resume_request(
            runs.store, request.path_params["session_id"], _string(data, "task")
        )
        run_request.surface = _string(data, "surface", "web")
        if data.get("model") is not None:
            run_request.model = _string(data, "model")
        run_request.script = data.get("script")
        run_request.attachments = refs_of(data)
        info = runs.start(run_request)
    except NoSuchSession as exc:
        return error(404, str(exc))
    except RunRequestError as exc:
        return error(400, str(exc))
    return JSONResponse({"run": run_dict(runs, info)}, status_code=201)


def sessions_routes() -> list[Route]:
    return [
        Route("/api/sessions", list_sessions),
        Route("/api/sessions/search", search_sessions),
        Route("/api/sessions/{session_id}", get_session),
        Route("/api/sessions/{session_id}", remove_session, methods=["DELETE"]),
        Route("/api/sessions/{session_id}/export", export_session),
        Route("/api/sessions/{session_id}/resume", resume_session, methods=["POST"]),
    ]
