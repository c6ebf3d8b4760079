"""The guard in front of every request: loopback Host, own Origin, launch token.

Any web page the user opens can reach 127.0.0.1, so nothing is trusted that
cannot be authenticated (see DESIGN.md, "The local server"):
- Host must be ``127.0.0.1:PORT`` or ``localhost:PORT`` (DNS rebinding);
- Origin, where a browser sends one, must be the server's own;
- the token comes as the cookie set by ``/?token=…``, a bearer header, or
  (WebSockets only) the ``token`` query parameter.
"""

from __future__ import annotations

import hmac
import json
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from server.web.locked_page import LOCKED_PAGE, send_page


def cookie_name(port: int) -> str:
    # Cookies are not scoped by port: two Sparrow windows must not overwrite each other's.
    return f"sparrow_token_{port}"


class LoopbackGuard:
    def __init__(self, app: ASGIApp, *, token: str, port: int) -> None:
        if len(token) < 16:
            raise ValueError("the launch token is too short")
        self.app = app
        self.token = token.encode()
        self.cookie = cookie_name(port)
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    def _valid(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate.encode(), self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if headers.get("host") not in self.hosts:
            await _refuse(
                scope, receive, send, 403, "this server only answers to its loopback address"
            )
            return
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            await _refuse(scope, receive, send, 403, "cross-origin requests are refused")
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        offered = query.get("token", [None])[0]
        if kind == "http" and scope["path"] == "/" and offered is not None:
            if not self._valid(offered):
                await self._refuse_token(scope, receive, send, headers, "wrong launch token")
                return
            await self._welcome(send)
            return
        if self._authenticated(headers, offered if kind == "websocket" else None):
            await self.app(scope, receive, send)
            return
        await self._refuse_token(scope, receive, send, headers, "missing or wrong launch token")

    async def _refuse_token(
        self, scope: Scope, receive: Receive, send: Send, headers: Headers, message: str
    ) -> None:
        """A 401: a page saying how to get in for a browser opening a page; JSON for the API."""
        if scope["type"] == "http" and _navigation(scope, headers):
            await send_page(send, 401, LOCKED_PAGE)
            return
        await _refuse(scope, receive, send, 401, message)

    def _authenticated(self, headers: Headers, query_token: str | None) -> bool:
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and self._valid(auth[7:].strip()):
            return True
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == self.cookie and self._valid(value):
                return True
        return self._valid(query_token)

    async def _welcome(self, send: Send) -> None:
        """Trade the token in the URL for a cookie, and drop it from the address bar."""
        cookie = f"{self.cookie}={self.token.decode()}; Path=/; HttpOnly; SameSite=Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", b"/"),
                    (b"set-cookie", cookie.encode()),
                    (b"cache-control", b"no-store"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def _navigation(scope: Scope, headers: Headers) -> bool:
    """A browser opening a page (not a script's fetch, not the API)."""
    if scope.get("method") not in ("GET", "HEAD") or scope["path"].startswith(("/api/", "/ws")):
        return False
    return "text/html" in headers.get("accept", "")


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    if scope["type"] == "websocket":
        # Closing before accepting makes the server answer the handshake with 403.
        await receive()
        await send({"type": "websocket.close", "code": 1008, "reason": message})
        return
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
