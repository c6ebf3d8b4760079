"""The REST routes. Each one parses, asks the runtime, and renders: no decision
is made here that the CLI would have to make differently."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.core.redaction import redact
from server.engine.store import RunInfo
from server.runtime.runs import RunManager, RunRequest, RunRequestError

VERSION = "0.1.0"
MAX_BODY_BYTES = 1_000_000


def runs_of(request: Request) -> RunManager:
    runs = request.state.runs
    assert isinstance(runs, RunManager)
    return runs


def run_dict(runs: RunManager, info: RunInfo) -> dict[str, Any]:
    """A RunInfo, with how many of its calls wait for an answer now, whether this
    process drives it (a "running" run of another process is not ``live``), and
    where it runs when elsewhere."""
    where = runs.elsewhere(info)
    return info.to_dict() | {
        "waiting": runs.approvals.waiting(info.id),
        "live": runs.is_live(info.id),
        "elsewhere": where.to_dict() if where is not None else None,
    }


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": redact(message)}, status_code=status)


async def _json_object(request: Request) -> dict[str, Any]:
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise RunRequestError(f"request body is larger than {MAX_BODY_BYTES} bytes")
    try:
        data = json.loads(body or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunRequestError(f"request body is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise RunRequestError("request body must be a JSON object")
    return data


def _string(data: dict[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise RunRequestError(
            f"'{key}' must be a string" if key in data else f"'{key}' is required"
        )
    return value


def refs_of(data: dict[str, Any]) -> list[str]:
    refs = data.get("attachments", [])
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise RunRequestError("'attachments' must be a list of paths or upload ids")
    return refs


async def health(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True, "version": VERSION})


async def create_run(request: Request) -> JSONResponse:
    try:
        data = await _json_object(request)
        autonomy = data.get("autonomy")
        if autonomy is not None and (
            isinstance(autonomy, bool) or not isinstance(autonomy, int | float)
        ):
            raise RunRequestError("'autonomy' must be a number from 0.0 to 1.0")
        continue_from = _string(data, "continue") if "continue" in data else None
        run_request = RunRequest(
            workspace=_string(data, "workspace", "" if continue_from else None),
            task=_string(data, "task"),
            model=_string(data, "model") if data.get("model") is not None else None,
            script=data.get("script"),
            continue_from=continue_from,
            mode=_string(data, "mode") if "mode" in data else None,
            autonomy=float(autonomy) if autonomy is not None else None,
            sandbox=_string(data, "sandbox") if "sandbox" in data else None,
            surface=_string(data, "surface", "web"),
            handoff=_string(data, "handoff") if data.get("handoff") else None,
            attachments=refs_of(data),
        )
        info = runs_of(request).start(run_request)
    except RunRequestError as exc:
        return error(400, str(exc))
    return JSONResponse({"run": run_dict(runs_of(request), info)}, status_code=201)


async def list_runs(request: Request) -> JSONResponse:
    runs = runs_of(request)
    recent = runs.recent()
    # Which agent file started each run (null: someone started it directly).
    agents = runs.agents.agents_of([info.id for info in recent])
    return JSONResponse(
        {"runs": [run_dict(runs, info) | {"agent": agents.get(info.id)} for info in recent]}
    )


async def get_run(request: Request) -> JSONResponse:
    runs = runs_of(request)
    info = runs.get(request.path_params["run_id"])
    if info is None:
        return error(404, "no such run")
    agent = runs.agents.agents_of([info.id]).get(info.id)
    return JSONResponse({"run": run_dict(runs, info) | {"agent": agent}})


async def run_events(request: Request) -> JSONResponse:
    events = runs_of(request).events(request.path_params["run_id"])
    if events is None:
        return error(404, "no such run")
    return JSONResponse({"events": [event.to_dict() for event in events]})


async def cancel_run(request: Request) -> JSONResponse:
    runs = runs_of(request)
    run_id = request.path_params["run_id"]
    info = runs.get(run_id)
    if info is None:
        return error(404, "no such run")
    where = runs.elsewhere(info)
    if where is not None and not where.can_cancel:
        return error(409, where.note)
    if not runs.cancel(run_id) and where is not None:
        return error(409, f"the run could not be reached to cancel it: {where.note}")
    info = runs.get(run_id)
    assert info is not None
    return JSONResponse({"run": run_dict(runs, info)}, status_code=202)


async def compact_run(request: Request) -> JSONResponse:
    """Compact the conversation of a run: the live run before its next request,
    or a follow-up run that only compacts (returned)."""
    runs = runs_of(request)
    run_id = request.path_params["run_id"]
    if runs.get(run_id) is None:
        return error(404, "no such run")
    try:
        info = runs.compact(run_id, surface="web")
    except RunRequestError as exc:
        return error(400, str(exc))
    return JSONResponse({"run": run_dict(runs, info)}, status_code=202)


async def recent_workspaces(request: Request) -> JSONResponse:
    return JSONResponse({"workspaces": runs_of(request).store.recent_workspaces()})


def api_routes() -> list[Route]:
    return [
        Route("/api/health", health),
        Route("/api/runs", create_run, methods=["POST"]),
        Route("/api/runs", list_runs, methods=["GET"]),
        Route("/api/runs/{run_id}", get_run),
        Route("/api/runs/{run_id}/events", run_events),
        Route("/api/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
        Route("/api/runs/{run_id}/compact", compact_run, methods=["POST"]),
        Route("/api/workspaces/recent", recent_workspaces),
    ]
