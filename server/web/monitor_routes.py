"""The session monitor's routes: ``GET /api/monitor`` (the live sessions, most
urgent first) and the WebSocket ``/ws/monitor`` (the same, at once and after
every change, and each level crossing). See docs/api.md, "Session monitor"."""

from __future__ import annotations

import anyio
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from server.web.monitor_feed import MonitorFeed


def feed_of(connection: HTTPConnection) -> MonitorFeed:
    feed = connection.state.monitor
    assert isinstance(feed, MonitorFeed)
    return feed


async def monitor_state(request: Request) -> JSONResponse:
    return JSONResponse(await feed_of(request).current_state())


async def monitor_socket(websocket: WebSocket) -> None:
    feed = feed_of(websocket)
    await websocket.accept()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_pump, websocket, feed, tg.cancel_scope)
        await _read_commands(websocket)
        tg.cancel_scope.cancel()


async def _pump(websocket: WebSocket, feed: MonitorFeed, scope: anyio.CancelScope) -> None:
    # Noted before the first snapshot: a change from now on is sent again after it.
    version, levels_seen = feed.version, feed.level_count
    try:
        await websocket.send_text(await feed.current_message())
        while True:
            version = await feed.wait(version)
            await websocket.send_text(feed.sessions_message)
            for text in feed.levels_after(levels_seen):
                await websocket.send_text(text)
            levels_seen = feed.level_count
    except (WebSocketDisconnect, OSError):
        pass
    scope.cancel()


async def _read_commands(websocket: WebSocket) -> None:
    # The socket takes no commands (what a client sends is ignored): this only
    # notices the client leaving.
    while True:
        try:
            await websocket.receive_text()
        except WebSocketDisconnect:
            return


def monitor_routes() -> list[BaseRoute]:
    return [
        Route("/api/monitor", monitor_state),
        WebSocketRoute("/ws/monitor", monitor_socket),
    ]
