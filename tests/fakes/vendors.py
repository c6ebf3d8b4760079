"""One local server that speaks three vendors' wire formats — Anthropic
Messages (``/v1/messages``), OpenAI Responses (``/v1/responses``) and Chat
Completions (``/v1/chat/completions``, what Ollama, llama.cpp, vLLM, LM Studio
and OpenRouter speak) — and answers from a script, recording every request.

In a test, use ``FakeVendor`` as a context manager (a real uvicorn server on
127.0.0.1 in a thread). As a process: ``python -m tests.fakes.vendors --port N
[--tokens K]`` prints its address and answers every request with K fast tokens
(the throughput bench)."""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.fakes.script import Drop, Failure, Reply, Stall, Step
from tests.fakes.wire import (
    Event,
    anthropic_error,
    anthropic_events,
    chat_events,
    openai_error,
    responses_events,
    sse,
)

Answer = Step | Callable[[dict[str, Any]], Step]


class ConnectionDropped(Exception):
    """Raised inside a streamed body: uvicorn then cuts the connection mid-response."""


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeVendor:
    models: list[str] = field(default_factory=lambda: ["fake-model"])
    # Every request is answered with this when the script is empty (the bench).
    default: Step | None = None
    requests: list[Recorded] = field(default_factory=list)
    disconnects: int = 0
    # Set when a client goes away in the middle of a streamed answer.
    disconnected: threading.Event = field(default_factory=threading.Event)
    _script: list[Answer] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None
    port: int = 0

    # --- the script ------------------------------------------------------------

    def script(self, *answers: Answer) -> FakeVendor:
        with self._lock:
            self._script.extend(answers)
        return self

    def _next(self, body: dict[str, Any]) -> Step | None:
        with self._lock:
            answer = self._script.pop(0) if self._script else self.default
        return answer(body) if callable(answer) else answer

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def last(self, path: str | None = None) -> Recorded:
        with self._lock:
            found = [r for r in self.requests if path is None or r.path == path]
        return found[-1]

    # --- the app ---------------------------------------------------------------

    async def _record(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(await request.body() or b"{}")
        with self._lock:
            self.requests.append(Recorded(request.url.path, dict(request.headers), body))
        return body

    async def _stream(self, events: Iterator[Event], step: Step) -> AsyncIterator[bytes]:
        reply = step.reply if isinstance(step, Drop | Stall) else step
        assert isinstance(reply, Reply)
        sent = 0
        try:
            for event in events:
                if isinstance(step, Drop) and sent >= step.after:
                    raise ConnectionDropped
                if isinstance(step, Stall) and sent >= step.after:
                    await anyio.sleep_forever()
                if reply.delay:
                    await anyio.sleep(reply.delay)
                yield sse(event)
                sent += 1
        except anyio.get_cancelled_exc_class():
            with self._lock:
                self.disconnects += 1
            self.disconnected.set()
            raise

    def _refuse(self, failure: Failure, body: dict[str, Any]) -> Response:
        headers = {}
        if failure.retry_after is not None:
            headers["retry-after"] = f"{failure.retry_after:g}"
            headers["retry-after-ms"] = str(int(failure.retry_after * 1000))
        return JSONResponse(body, status_code=failure.status, headers=headers)

    def _missing(self) -> Response:
        return JSONResponse(
            {"error": {"message": "the fake vendor has no reply left in its script",
                       "type": "server_error"}},
            status_code=500,
        )

    async def _messages(self, request: Request) -> Response:
        body = await self._record(request)
        step = self._next(body)
        if step is None:
            return self._missing()
        if isinstance(step, Failure):
            return self._refuse(step, anthropic_error(step))
        reply = step.reply if isinstance(step, Drop | Stall) else step
        events = anthropic_events(reply, body.get("model", "?"))
        return StreamingResponse(self._stream(events, step), media_type="text/event-stream")

    async def _responses(self, request: Request) -> Response:
        body = await self._record(request)
        step = self._next(body)
        if step is None:
            return self._missing()
        if isinstance(step, Failure):
            return self._refuse(step, openai_error(step))
        reply = step.reply if isinstance(step, Drop | Stall) else step
        events = responses_events(reply, body.get("model", "?"))
        return StreamingResponse(self._stream(events, step), media_type="text/event-stream")

    async def _chat(self, request: Request) -> Response:
        body = await self._record(request)
        step = self._next(body)
        if step is None:
            return self._missing()
        if isinstance(step, Failure):
            return self._refuse(step, openai_error(step))
        reply = step.reply if isinstance(step, Drop | Stall) else step
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events = chat_events(reply, body.get("model", "?"), usage)

        async def with_done() -> AsyncIterator[bytes]:
            async for chunk in self._stream(events, step):
                yield chunk
            yield b"data: [DONE]\n\n"

        return StreamingResponse(with_done(), media_type="text/event-stream")

    async def _list_models(self, request: Request) -> Response:
        if request.headers.get("anthropic-version"):
            data = [{"type": "model", "id": m, "display_name": m, "created_at":
                     "2026-01-01T00:00:00Z", "max_input_tokens": 200_000} for m in self.models]
            return JSONResponse({"data": data, "has_more": False, "first_id": None,
                                 "last_id": None})
        return JSONResponse({"object": "list", "data": [
            {"id": m, "object": "model", "created": 1790000000, "owned_by": "fake"}
            for m in self.models
        ]})

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/v1/messages", self._messages, methods=["POST"]),
            Route("/v1/responses", self._responses, methods=["POST"]),
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/models", self._list_models),
        ])

    # --- running it --------------------------------------------------------------

    def start(self, port: int = 0) -> FakeVendor:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app(), log_level="error", access_log=False,
                                log_config=None, timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the fake vendor did not start")
            time.sleep(0.01)
        self._socket = sock
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        if getattr(self, "_socket", None) is not None:
            self._socket.close()

    def __enter__(self) -> FakeVendor:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="A fake model vendor on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=1000, help="tokens in every answer")
    args = parser.parse_args()
    vendor = FakeVendor(default=Reply(tokens=args.tokens)).start(args.port)
    print(f"fake vendor at {vendor.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        vendor.stop()


if __name__ == "__main__":
    main()
