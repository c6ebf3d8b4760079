"""The session monitor's routes: ``GET /api/monitor`` (the live sessions, most
urgent first), the WebSocket ``/ws/monitor`` (the same, at once and after
every change, and each level crossing) and ``POST /api/monitor/sessions/handoff``
(a handoff doc of a live session, in its folder). See docs/api.md, "Session
monitor"."""

from __future__ import annotations

from pathlib import Path

import anyio
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from server.monitor.discovery import describe_path
from server.monitor.reading import SessionReading
from server.runtime.runs import RunRequestError
from server.runtime.session_handoff import SessionHandoffError, session_doc, write_session_doc
from server.web.api import _json_object, error
from server.web.monitor_feed import MonitorFeed


def feed_of(connection: HTTPConnection) -> MonitorFeed:
    feed = connection.state.monitor
    assert isinstance(feed, MonitorFeed)
    return feed


async def monitor_state(request: Request) -> JSONResponse:
    return JSONResponse(await feed_of(request).current_state())


async def session_handoff(request: Request) -> JSONResponse:
    """Write a handoff doc of a session the monitor shows now (only those: the
    key is a path, and no other file is read)."""
    feed = feed_of(request)
    try:
        data = await _json_object(request)
    except RunRequestError as exc:
        return error(400, str(exc))
    key, task = data.get("key"), data.get("task", "")
    if not isinstance(key, str) or not key:
        return error(400, "'key' is required: a session's key, as /api/monitor lists it")
    if not isinstance(task, str):
        return error(400, "'task' must be a string")
    reading = await anyio.to_thread.run_sync(feed.monitor.reading, key)
    if reading is None:
        return error(404, "no live session with this key (it may have gone idle)")
    try:
        path = await anyio.to_thread.run_sync(_write_doc, feed, reading, task)
    except SessionHandoffError as exc:
        return error(409, str(exc))
    except OSError as exc:
        return error(409, f"the transcript could not be read: {exc}")
    return JSONResponse({"path": str(path)})


def _write_doc(feed: MonitorFeed, reading: SessionReading, task: str) -> Path:
    described = describe_path(reading.path, feed.monitor.roots)
    subagent = described is not None and described[1].subagent
    doc, work = session_doc(
        reading.path,
        reading.tool,
        feed.monitor.config,
        task=task,
        subagent=subagent,
        reading=reading,
    )
    return write_session_doc(doc, work)


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
    # A client that must not miss a crossing (the desktop's notifications, which
    # connect while the first poll may already have run) asks for the kept ones.
    kept = feed.levels_after(0) if websocket.query_params.get("levels") == "kept" else []
    try:
        await websocket.send_text(await feed.current_message())
        for text in kept:
            await websocket.send_text(text)
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
        Route("/api/monitor/sessions/handoff", session_handoff, methods=["POST"]),
        WebSocketRoute("/ws/monitor", monitor_socket),
    ]
