"""The memory routes: the facts (list, search, add, forget) and the two docs
(read, replace). Each parses, asks the engine's memory, and renders; the
guards decide, and a rejection comes back as a 400 with its reason and its
category. See docs/api.md, "Memory"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from server.core.redaction import redact
from server.engine.memory import DocKind, Memory, MemoryRejected, MemoryWriteError
from server.engine.memory.docs import LIMITS
from server.engine.memory.guards import FACT_KEY_LIMIT, FACT_VALUE_LIMIT
from server.runtime.runs import RunRequestError
from server.web.api import _json_object, error, runs_of


def _memory(request: Request) -> Memory:
    return runs_of(request).memory


def _workspace(value: object, *, must_exist: bool = False) -> Path | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise MemoryWriteError("'workspace' must be a folder's path, a string")
    folder = Path(value).expanduser().resolve()
    if must_exist and not folder.is_dir():
        raise MemoryWriteError(f"workspace not found: {folder}")
    return folder


def _refused(exc: MemoryWriteError) -> JSONResponse:
    """A 400 with the reason; a guard's rejection also names its category."""
    response = error(400, str(exc))
    if isinstance(exc, MemoryRejected):
        body = {"error": redact(str(exc)), "category": exc.category}
        response = JSONResponse(body, status_code=400)
    return response


def _limits() -> dict[str, Any]:
    return {
        "fact_key": FACT_KEY_LIMIT,
        "fact_value": FACT_VALUE_LIMIT,
        "docs": {kind.value: limit for kind, limit in LIMITS.items()},
    }


async def get_memory(request: Request) -> JSONResponse:
    memory = _memory(request)
    try:
        workspace = _workspace(request.query_params.get("workspace"))
    except MemoryWriteError as exc:
        return _refused(exc)
    facts = memory.facts.list_facts(workspace)
    docs: dict[str, Any] = {
        "user": memory.docs.read(DocKind.USER).to_dict(),
        "memory": memory.docs.read(DocKind.MEMORY, workspace).to_dict() if workspace else None,
    }
    return JSONResponse({"facts": [f.to_dict() for f in facts], "docs": docs, "limits": _limits()})


async def search_memory(request: Request) -> JSONResponse:
    params = request.query_params
    try:
        workspace = _workspace(params.get("workspace"))
    except MemoryWriteError as exc:
        return _refused(exc)
    facts = _memory(request).facts.search(params.get("q", ""), workspace)
    return JSONResponse({"facts": [f.to_dict() for f in facts]})


async def create_fact(request: Request) -> JSONResponse:
    try:
        data = await _json_object(request)
        key, value = data.get("key"), data.get("value")
        if not isinstance(key, str) or not isinstance(value, str):
            return error(400, "'key' and 'value' are required, as strings")
        workspace = _workspace(data.get("workspace"), must_exist=True)
        fact = _memory(request).facts.remember(key, value, workspace)
    except RunRequestError as exc:
        return error(400, str(exc))
    except MemoryWriteError as exc:
        return _refused(exc)
    return JSONResponse({"fact": fact.to_dict()}, status_code=201)


async def delete_fact(request: Request) -> JSONResponse:
    raw = request.path_params["fact_id"]
    gone = _memory(request).facts.forget(int(raw)) if raw.isdigit() else None
    if gone is None:
        return error(404, f"no fact {raw}")
    return JSONResponse({"deleted": gone.id})


async def put_doc(request: Request) -> JSONResponse:
    name = request.path_params["kind"]
    if name not in ("user", "memory"):
        return error(404, f"no memory doc '{name}': it is 'user' or 'memory'")
    kind = DocKind(name)
    try:
        data = await _json_object(request)
        text = data.get("text")
        if not isinstance(text, str):
            return error(400, "'text' is required, a string (empty clears the doc)")
        workspace = _workspace(request.query_params.get("workspace"), must_exist=True)
        doc = _memory(request).docs.write(kind, text, workspace)
    except RunRequestError as exc:
        return error(400, str(exc))
    except MemoryWriteError as exc:
        return _refused(exc)
    return JSONResponse({"doc": doc.to_dict()})


def memory_routes() -> list[BaseRoute]:
    return [
        Route("/api/memory", get_memory, methods=["GET"]),
        Route("/api/memory/search", search_memory, methods=["GET"]),
        Route("/api/memory/facts", create_fact, methods=["POST"]),
        Route("/api/memory/facts/{fact_id}", delete_fact, methods=["DELETE"]),
        Route("/api/memory/docs/{kind}", put_doc, methods=["PUT"]),
    ]
