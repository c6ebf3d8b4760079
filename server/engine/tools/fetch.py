"""fetch_url: GET one http(s) URL and show the model its text (the request
itself is in http_get.py).

Plain stdlib urllib in a worker thread: no cookie jar, no stored credentials,
no other schemes (not even through a redirect), and never more than
files.read_limit_bytes of the body."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread

from server.engine.tools.base import Risk, ToolContext, ToolOutput, check_args, string_schema

_SCHEMES = ("http", "https")


def url_problem(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        return f"{url}: not a valid URL ({exc})"
    if parts.scheme.lower() not in _SCHEMES:
        scheme = f"'{parts.scheme}'" if parts.scheme else "none"
        return f"{url}: only http and https URLs can be fetched (scheme: {scheme})"
    if not parts.hostname:
        return f"{url}: no host in the URL"
    if parts.username is not None or parts.password is not None:
        return f"{url}: URLs with credentials in them are not fetched"
    return None


class FetchUrl:
    name = "fetch_url"
    description = (
        "Fetch a web page or file over http(s) with GET and return its status, content type "
        "and text. Binary content is summarised, not shown; long bodies are cut."
    )
    risk = Risk.NETWORK
    parameters = string_schema({"url": "An http:// or https:// URL."})
    timeout_seconds = 30.0

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        url = check_args(self, args)["url"].strip()
        problem = url_problem(url)
        if problem:
            return ToolOutput(False, problem)
        limit = ctx.settings.files.read_limit_bytes
        # Abandon on cancel: a stopped run must not wait out a slow server.
        # urllib.request is loaded at the first fetch, not with every server start.
        from server.engine.tools.http_get import get

        return await anyio.to_thread.run_sync(
            get, url, limit, self.timeout_seconds, abandon_on_cancel=True
        )
