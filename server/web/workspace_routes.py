"""``GET /api/workspace/paths``: workspace paths for ``@`` completion in the composer.

The indexes live as long as the server (the app's lifespan makes them); a
query waits a moment for a first build, then answers with what there is and
says whether the index is ready, so the page can ask again.
"""

from __future__ import annotations

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.engine.path_index import PathIndexes
from server.engine.path_search import MAX_LIMIT
from server.engine.workspace import WorkspaceError, open_workspace, own_folders_inside
from server.web.api import error

DEFAULT_LIMIT = 20
# How long a query waits for a workspace's first index build before answering.
FIRST_BUILD_WAIT_SECONDS = 1.0


def _indexes(request: Request) -> PathIndexes:
    indexes = request.state.path_indexes
    assert isinstance(indexes, PathIndexes)
    return indexes


async def workspace_paths(request: Request) -> JSONResponse:
    params = request.query_params
    try:
        workspace = open_workspace(params.get("workspace", ""))
    except WorkspaceError as exc:
        return error(400, str(exc))
    raw_limit = params.get("limit", str(DEFAULT_LIMIT))
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= MAX_LIMIT:
        return error(400, f"'limit' must be a whole number from 1 to {MAX_LIMIT}")
    indexes = _indexes(request)
    if "" in own_folders_inside(workspace.root, indexes.own):
        return error(400, f"{workspace.root} is inside Sparrow's own folders")
    index = indexes.get(workspace.root)
    query, limit = params.get("q", ""), int(raw_limit)
    if not index.ready:
        await anyio.to_thread.run_sync(index.wait, FIRST_BUILD_WAIT_SECONDS)
    # In a worker thread: applying the watch's news may walk a new folder, and a
    # changed index is re-sorted before it is searched.
    found = await anyio.to_thread.run_sync(index.search, query, limit)
    return JSONResponse(
        {
            "workspace": str(workspace.root),
            "ready": index.ready,
            "paths": [suggestion.to_dict() for suggestion in found],
        }
    )


def workspace_routes() -> list[Route]:
    return [Route("/api/workspace/paths", workspace_paths)]
