"""The checkpoint routes: a run's checkpoints, the diff of one, and a rewind.
Each parses, asks the checkpoint engine, and renders; the engine decides what a
diff or a rewind is. See docs/api.md, "Checkpoints"."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from server.core.settings import SettingsError, load_settings
from server.runtime.runs import RunManager
from server.web.api import error, runs_of

if TYPE_CHECKING:
    from server.engine.checkpoints import CheckpointStore


def _store(runs: RunManager, workspace: str | None = None) -> CheckpointStore:
    settings = load_settings(runs.paths.config_file, Path(workspace) if workspace else None)
    return runs.checkpoints_for(settings)


def live_runs_on(runs: RunManager, workspace: str) -> list[str]:
    """The ids of the runs working on ``workspace`` right now, in this process or
    another (a `sparrow run` in a terminal)."""
    return [info.id for info in runs.store.running_on(workspace)]


async def run_checkpoints(request: Request) -> JSONResponse:
    runs = runs_of(request)
    run_id = request.path_params["run_id"]
    info = runs.get(run_id)
    if info is None:
        return error(404, "no such run")
    try:
        found = _store(runs, info.workspace).list(run_id=run_id)
    except SettingsError as exc:
        return error(400, str(exc))
    return JSONResponse({"checkpoints": [c.to_dict() for c in found]})


async def checkpoint_diff(request: Request) -> JSONResponse:
    from server.engine.checkpoints import CheckpointError, CheckpointNotFound

    runs = runs_of(request)
    checkpoint_id = request.path_params["checkpoint_id"]
    to_id = request.query_params.get("to") or None
    try:
        store = _store(runs)
        checkpoint = store.get(checkpoint_id)
        if checkpoint is None:
            return error(404, f"no checkpoint '{checkpoint_id}'")
        store = _store(runs, checkpoint.workspace)
        files = store.diff(checkpoint_id, to_id)
    except CheckpointNotFound as exc:
        return error(404, str(exc))
    except (CheckpointError, SettingsError) as exc:
        return error(400, str(exc))
    return JSONResponse({"files": [f.to_dict() for f in files]})


async def checkpoint_rewind(request: Request) -> JSONResponse:
    from server.engine.checkpoints import CheckpointError, CheckpointNotFound

    runs = runs_of(request)
    checkpoint_id = request.path_params["checkpoint_id"]
    try:
        checkpoint = _store(runs).get(checkpoint_id)
        if checkpoint is None:
            return error(404, f"no checkpoint '{checkpoint_id}'")
        live = live_runs_on(runs, checkpoint.workspace)
        if live:
            return error(
                409,
                f"run {live[0]} is working on {checkpoint.workspace}: "
                "cancel it or let it finish before rewinding",
            )
        # The checkpoint taken first belongs to the rewound run's timeline, to undo from there.
        result = _store(runs, checkpoint.workspace).rewind(
            Path(checkpoint.workspace), checkpoint_id, run_id=checkpoint.run_id
        )
    except CheckpointNotFound as exc:
        return error(404, str(exc))
    except (CheckpointError, SettingsError) as exc:
        return error(400, str(exc))
    return JSONResponse({"rewind": result.to_dict()})


def checkpoint_routes() -> list[BaseRoute]:
    return [
        Route("/api/runs/{run_id}/checkpoints", run_checkpoints, methods=["GET"]),
        Route("/api/checkpoints/{checkpoint_id}/diff", checkpoint_diff, methods=["GET"]),
        Route("/api/checkpoints/{checkpoint_id}/rewind", checkpoint_rewind, methods=["POST"]),
    ]
