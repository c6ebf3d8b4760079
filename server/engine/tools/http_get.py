"""The GET behind fetch_url, with urllib: redirects checked like the URL the
model gave, at most ``limit`` bytes of the body read, text decoded and binary
content only summarised."""

from __future__ import annotations

import codecs
import http.client
import urllib.error
import urllib.request
from typing import IO

from server.engine.tools.base import ToolOutput
from server.engine.tools.fetch import url_problem
from server.engine.tools.files import format_size, looks_binary

USER_AGENT = "Sparrow/0.1"
_ERROR_EXCERPT = 500

# Content types that are text although not text/*.
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/x-sh",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-ndjson",
        "application/sql",
        "application/graphql",
        "application/x-www-form-urlencoded",
    }
)


def _is_text_type(content_type: str) -> bool:
    return (
        content_type.startswith("text/")
        or content_type in _TEXT_TYPES
        or content_type.endswith(("+json", "+xml"))
    )


class _SafeRedirects(urllib.request.HTTPRedirectHandler):
    """urllib follows redirects to ftp:// too; a redirect must pass the same checks
    as the URL the model gave."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        problem = url_problem(newurl)
        if problem:
            raise urllib.error.URLError(f"refused redirect to {problem}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _decode(body: bytes, charset: str | None) -> str:
    try:
        codecs.lookup(charset or "utf-8")
    except LookupError:  # a server's made-up charset name
        charset = "utf-8"
    return body.decode(charset or "utf-8", errors="replace")


def get(url: str, limit: int, timeout: float) -> ToolOutput:
    """GET ``url`` (checked already) and render what came back for the model."""
    opener = urllib.request.build_opener(_SafeRedirects())
    request = urllib.request.Request(
        url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            return _read(response, limit)
    except urllib.error.HTTPError as exc:
        with exc:
            return _http_error(url, exc)
    except TimeoutError:
        return ToolOutput(False, f"{url}: timed out after {timeout:g} s")
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            return ToolOutput(False, f"{url}: timed out after {timeout:g} s")
        return ToolOutput(False, f"{url}: could not fetch: {reason}")
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return ToolOutput(False, f"{url}: could not fetch: {exc or type(exc).__name__}")


def _read(response: http.client.HTTPResponse, limit: int) -> ToolOutput:
    header = response.headers.get("Content-Type", "")
    content_type = response.headers.get_content_type() if header else ""
    status = f"HTTP {response.status} {header or '(no content type)'}"
    length = response.headers.get("Content-Length", "")
    size = format_size(int(length)) if length.isdigit() else "size unknown"
    if content_type and not _is_text_type(content_type):
        return ToolOutput(True, f"{status}\nbinary content ({size}); not shown")
    body = response.read(limit + 1)
    # A server may call anything text/plain; NUL bytes say otherwise.
    if looks_binary(body):
        return ToolOutput(True, f"{status}\nbinary content ({size}); not shown")
    cut = len(body) > limit
    text = _decode(body[:limit], response.headers.get_content_charset())
    if cut:
        text += f"\n… [body cut after {format_size(limit)}]"
    return ToolOutput(True, f"{status}\n{text}", truncated=cut)


def _http_error(url: str, error: urllib.error.HTTPError) -> ToolOutput:
    try:
        excerpt = _decode(error.read(_ERROR_EXCERPT * 4), error.headers.get_content_charset())
    except (OSError, http.client.HTTPException):
        excerpt = ""
    excerpt = " ".join(excerpt.split())
    if len(excerpt) > _ERROR_EXCERPT:
        excerpt = excerpt[:_ERROR_EXCERPT] + "…"
    text = f"HTTP {error.code} {error.reason} from {url}"
    return ToolOutput(False, text + (f"\n{excerpt}" if excerpt else ""))
