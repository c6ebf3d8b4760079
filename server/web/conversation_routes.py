"""Conversations: the runs of a session, and what a run sent to its
model for a turn (docs/api.md, "Runs")."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.web.api import error, run_dict, runs_of


async def session_runs(request: Request) -> JSONResponse:
    runs = runs_of(request)
    session_id = request.path_params["session_id"]
    if runs.store.get_session(session_id) is None:
        return error(404, "no such conversation")
    return JSONResponse(
        {"runs": [run_dict(runs, info) for info in runs.store.session_runs(session_id)]}
    )


async def turn_request(request: Request) -> JSONResponse:
    turn = request.path_params["turn"]
    sent = runs_of(request).request_of(request.path_params["run_id"], turn)
    if sent is None:
        return error(404, f"no request of turn {turn} in that run")
    return JSONResponse({"request": sent})


def conversation_routes() -> list[Route]:
    return [
        Route("/api/sessions/{session_id}/runs", session_runs),
        Route("/api/runs/{run_id}/requests/{turn:int}", turn_request),
    ]
