"""The agent routes: the agents (valid, and invalid with their reasons) with
their next and last runs; one file's text read, written (checked first: a bad
file is refused with its reason and not written) or deleted; a run started now
or stopped. See docs/api.md, "Agents"."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from server.engine.agents import AgentFileError, check_name
from server.runtime.agents import AgentRuntime
from server.runtime.runs import RunRequestError
from server.web.api import _json_object, error, run_dict, runs_of


def _agents(request: Request) -> AgentRuntime:
    return runs_of(request).agents


def _name(request: Request) -> str:
    """The path's agent name; AgentFileError when it cannot be one."""
    return check_name(request.path_params["name"])


async def list_agents(request: Request) -> JSONResponse:
    agents = _agents(request)
    statuses, invalid = agents.statuses()
    return JSONResponse({
        "agents": [status.to_dict() for status in statuses],
        "invalid": [bad.to_dict() for bad in invalid],
        "folder": str(agents.folder.folder),
    })


async def get_agent(request: Request) -> JSONResponse:
    agents = _agents(request)
    try:
        name = _name(request)
        text = agents.read(name)
    except (AgentFileError, RunRequestError) as exc:
        return error(400, str(exc))
    if text is None:
        return error(404, f"no agent {name!r}")
    listing = agents.listing().get(name)
    reason = getattr(listing, "reason", None)
    return JSONResponse({
        "name": name,
        "path": str(agents.folder.path_of(name)),
        "text": text,
        "valid": reason is None,
        "reason": reason,
    })


async def put_agent(request: Request) -> JSONResponse:
    agents = _agents(request)
    try:
        name = _name(request)
        data = await _json_object(request)
        text = data.get("text")
        if not isinstance(text, str):
            return error(400, "'text' is required: the whole agent file, a string")
        existed = agents.folder.path_of(name).exists()
        agent = agents.write(name, text)
    except (AgentFileError, RunRequestError) as exc:
        return error(400, str(exc))
    status = agents.status_of(agent)
    return JSONResponse({"agent": status.to_dict()}, status_code=200 if existed else 201)


async def delete_agent(request: Request) -> JSONResponse:
    try:
        name = _name(request)
        deleted = _agents(request).delete(name)
    except AgentFileError as exc:
        return error(400, str(exc))
    except RunRequestError as exc:
        return error(409, str(exc))
    if not deleted:
        return error(404, f"no agent {name!r}")
    return JSONResponse({"deleted": name})


async def run_agent(request: Request) -> JSONResponse:
    runs = runs_of(request)
    try:
        info = runs.agents.start(_name(request), surface="web")
    except (AgentFileError, RunRequestError) as exc:
        return error(400, str(exc))
    return JSONResponse({"run": run_dict(runs, info)}, status_code=201)


async def stop_agent(request: Request) -> JSONResponse:
    runs = runs_of(request)
    try:
        info = runs.agents.stop(_name(request))
    except AgentFileError as exc:
        return error(400, str(exc))
    if info is None:
        return error(404, "the agent has no run going in this app")
    return JSONResponse({"run": run_dict(runs, info)}, status_code=202)


def agent_routes() -> list[BaseRoute]:
    return [
        Route("/api/agents", list_agents, methods=["GET"]),
        Route("/api/agents/{name}", get_agent, methods=["GET"]),
        Route("/api/agents/{name}", put_agent, methods=["PUT"]),
        Route("/api/agents/{name}", delete_agent, methods=["DELETE"]),
        Route("/api/agents/{name}/run", run_agent, methods=["POST"]),
        Route("/api/agents/{name}/stop", stop_agent, methods=["POST"]),
    ]
