"""The Starlette app: the UI at ``/``, the API under ``/api``, events on ``/ws``,
all behind the loopback guard. Its lifespan owns the runtime: the runs, the
agents' scheduler, and the session monitor polling beside them (``/api/monitor``,
``/ws/monitor``)."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, WebSocketRoute

from server.core.paths import Paths, resolve_paths
from server.engine.bus import EventBus
from server.engine.path_index import PathIndexes
from server.engine.store import Store
from server.runtime.follower import RunFollower
from server.runtime.runs import RunManager
from server.runtime.scheduler import Scheduler
from server.runtime.sessions import apply_retention
from server.web.agent_routes import agent_routes
from server.web.api import api_routes
from server.web.attachment_routes import attachment_routes
from server.web.checkpoint_routes import checkpoint_routes
from server.web.conversation_routes import conversation_routes
from server.web.memory_routes import memory_routes
from server.web.model_routes import model_routes
from server.web.monitor_feed import MonitorFeed, make_monitor
from server.web.monitor_routes import monitor_routes
from server.web.retention_routes import retention_routes
from server.web.safety_routes import safety_routes
from server.web.security import LoopbackGuard
from server.web.sessions_routes import sessions_routes
from server.web.socket import events_socket
from server.web.static import ui_dir
from server.web.ui_files import UIFiles
from server.web.workspace_routes import workspace_routes


async def _server_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": f"internal error: {type(exc).__name__}"}, status_code=500)


def create_app(
    *, token: str, port: int, paths: Paths | None = None, demo_delay: float | None = None
) -> Starlette:
    paths = paths or resolve_paths()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        paths.ensure()
        store = Store(paths.database)
        apply_retention(paths, store)
        path_indexes = PathIndexes(paths.cache, paths.own_folders())
        try:
            feed = MonitorFeed(*make_monitor(paths.config_file, paths.state))
            async with anyio.create_task_group() as tg:
                # The monitor's first poll runs in the background: the server answers meanwhile.
                tg.start_soon(feed.run)
                try:
                    # The scheduler ends before the runs do: it never starts one late.
                    async with (
                        RunManager(
                            paths=paths, store=store, bus=EventBus(), demo_delay=demo_delay
                        ) as runs,
                        anyio.create_task_group() as background,
                    ):
                        background.start_soon(Scheduler(runs.agents).run)
                        # Runs of `sparrow run` in other processes, live in the window too.
                        background.start_soon(RunFollower(runs).run)
                        # What start-up made lives as long as the server: out of the
                        # collector's way, so that its passes during a fast stream stay cheap.
                        gc.freeze()
                        try:
                            yield {"runs": runs, "monitor": feed, "path_indexes": path_indexes}
                        finally:
                            background.cancel_scope.cancel()
                finally:
                    tg.cancel_scope.cancel()  # the runs have ended: now the monitor
        finally:
            path_indexes.close()
            store.close()

    routes: list[BaseRoute] = [
        *api_routes(),
        *agent_routes(),
        *attachment_routes(),
        *checkpoint_routes(),
        *sessions_routes(),
        *retention_routes(),
        *conversation_routes(),
        *memory_routes(),
        *model_routes(),
        *monitor_routes(),
        *safety_routes(),
        *workspace_routes(),
        WebSocketRoute("/ws", events_socket),
        Mount("/", UIFiles(ui_dir())),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(LoopbackGuard, token=token, port=port)],
        lifespan=lifespan,
        exception_handlers={500: _server_error},
    )
