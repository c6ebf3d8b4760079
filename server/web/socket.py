"""The WebSocket ``/ws``: a client subscribes to runs and receives their events,
the history of a run first, then each new event as it happens."""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.websockets import WebSocket, WebSocketDisconnect

from server.engine.bus import ALL_RUNS, SubscriberLagged, Subscription
from server.runtime.runs import RunManager

LAGGED_CLOSE_CODE = 4008
# After a message, the pump waits this long for more: a model streaming thousands of
# tokens a second then costs one message per stream a tick, not one per token.
GATHER_SECONDS = 0.008


async def events_socket(websocket: WebSocket) -> None:
    runs = websocket.state.runs
    assert isinstance(runs, RunManager)
    await websocket.accept()
    subscription = runs.bus.subscribe(set())
    # Uncontended (the usual case), taking it costs no turn of the event loop: it is
    # taken for every message of a stream.
    lock = anyio.Lock(fast_acquire=True)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pump, websocket, subscription, lock, tg.cancel_scope)
            await _read_commands(websocket, runs, subscription, lock)
            tg.cancel_scope.cancel()
    finally:
        subscription.close()


async def _pump(
    websocket: WebSocket, subscription: Subscription, lock: anyio.Lock, scope: anyio.CancelScope
) -> None:
    try:
        while True:
            batch = await subscription.receive()
            async with lock:
                for event in batch:
                    await websocket.send_text(event.to_json())
            # Meanwhile deltas of a stream merge in the subscription's queue.
            await anyio.sleep(GATHER_SECONDS)
    except SubscriberLagged:
        await websocket.close(code=LAGGED_CLOSE_CODE, reason="client fell behind; subscribe again")
    except (anyio.EndOfStream, WebSocketDisconnect, OSError):
        pass
    scope.cancel()


async def _read_commands(
    websocket: WebSocket, runs: RunManager, subscription: Subscription, lock: anyio.Lock
) -> None:
    while True:
        try:
            text = await websocket.receive_text()
        except WebSocketDisconnect:
            return
        try:
            command: Any = json.loads(text)
            op, run_id = command["op"], command["run_id"]
            if not isinstance(run_id, str):
                raise TypeError
        except (json.JSONDecodeError, KeyError, TypeError):
            await _send_error(
                websocket, lock, 'expected {"op": "subscribe"|"unsubscribe", "run_id": "…"}'
            )
            continue
        if op == "subscribe":
            if run_id == ALL_RUNS:
                subscription.run_ids.add(ALL_RUNS)
                continue
            history = runs.events(run_id)
            if history is None:
                await _send_error(websocket, lock, f"no such run: {run_id}")
                continue
            # Same synchronous step: no event of this run can fall between the two.
            subscription.run_ids.add(run_id)
            subscription.push_history(history)
        elif op == "unsubscribe":
            subscription.run_ids.discard(run_id)
        else:
            await _send_error(websocket, lock, f"unknown op {op!r}")


async def _send_error(websocket: WebSocket, lock: anyio.Lock, message: str) -> None:
    async with lock:
        await websocket.send_text(json.dumps({"type": "error", "error": message}))
