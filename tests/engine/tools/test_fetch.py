import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from server.core.settings import FileSettings, Settings
from server.engine.tools.base import Risk, ToolContext, ToolOutput
from server.engine.tools.fetch import FetchUrl
from server.engine.workspace import open_workspace

pytestmark = pytest.mark.anyio

# path: (status, content type, body)
ROUTES: dict[str, tuple[int, str, bytes]] = {
    "/text": (200, "text/plain; charset=utf-8", "héllo wörld".encode()),
    "/latin": (200, "text/html; charset=latin-1", "café".encode("latin-1")),
    "/bogus-charset": (200, "text/plain; charset=no-such-codec", b"plain"),
    "/json": (200, "application/json", b'{"a": 1}'),
    "/image": (200, "image/png", b"\x89PNG\r\n\x1a\n\x00\x00" * 10),
    "/nul": (200, "text/plain", b"abc\x00def"),
    "/big": (200, "text/plain", b"x" * 500),
    "/missing": (404, "text/html", b"<h1>Not   Found</h1>\n" + b"y" * 2000),
    "/broken": (500, "text/plain", b"boom"),
}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/headers":
            body = "".join(f"{k}: {v}\n" for k, v in self.headers.items()).encode()
            self._send(200, "text/plain", body)
        elif self.path == "/to-text":
            self._redirect("/text")
        elif self.path == "/to-file":
            self._redirect("file:///etc/passwd")
        elif self.path == "/to-ftp":
            self._redirect("ftp://127.0.0.1/x")
        elif self.path == "/slow":
            time.sleep(1)
            # The client has given up by now; writing to it would print a broken pipe.
        else:
            self._send(*ROUTES[self.path])

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    # A proxy from the environment would swallow requests to 127.0.0.1.
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    settings = Settings(files=FileSettings(read_limit_bytes=100, list_limit_entries=3))
    return ToolContext(open_workspace(workspace), settings)


async def fetch(ctx: ToolContext, url: str, tool: FetchUrl | None = None) -> ToolOutput:
    return await (tool or FetchUrl()).run({"url": url}, ctx)


def test_risk_level() -> None:
    assert FetchUrl.risk == Risk.NETWORK


async def test_text_is_shown_with_status_and_type(ctx: ToolContext, server: str) -> None:
    out = await fetch(ctx, f"{server}/text")
    assert out.ok and not out.truncated
    assert out.content == "HTTP 200 text/plain; charset=utf-8\nhéllo wörld"
    latin = await fetch(ctx, f"{server}/latin")
    assert latin.content.endswith("\ncafé")
    bogus = await fetch(ctx, f"{server}/bogus-charset")
    assert bogus.ok and bogus.content.endswith("\nplain")
    data = await fetch(ctx, f"{server}/json")
    assert data.content == 'HTTP 200 application/json\n{"a": 1}'
    redirected = await fetch(ctx, f"{server}/to-text")
    assert redirected.ok and "héllo" in redirected.content


async def test_sends_a_user_agent_and_no_cookies(ctx: ToolContext, server: str) -> None:
    out = await fetch(ctx, f"{server}/headers")
    headers = out.content.lower()
    assert "user-agent: sparrow/0.1" in headers
    assert "cookie" not in headers and "authorization" not in headers


async def test_binary_content_is_summarised(ctx: ToolContext, server: str) -> None:
    image = await fetch(ctx, f"{server}/image")
    assert image.ok and image.content == "HTTP 200 image/png\nbinary content (100 B); not shown"
    nul = await fetch(ctx, f"{server}/nul")
    assert nul.ok and "binary content" in nul.content and "abc" not in nul.content


async def test_a_large_body_is_cut(ctx: ToolContext, server: str) -> None:
    out = await fetch(ctx, f"{server}/big")
    assert out.ok and out.truncated
    assert out.content.startswith("HTTP 200 text/plain\n" + "x" * 100 + "\n…")
    assert "x" * 101 not in out.content


async def test_http_errors_fail_with_status_and_excerpt(ctx: ToolContext, server: str) -> None:
    missing = await fetch(ctx, f"{server}/missing")
    assert not missing.ok and missing.content.startswith("HTTP 404 Not Found from ")
    assert "<h1>Not Found</h1>" in missing.content and len(missing.content) < 700
    broken = await fetch(ctx, f"{server}/broken")
    assert not broken.ok and "HTTP 500" in broken.content and "boom" in broken.content


async def test_a_redirect_to_another_scheme_is_refused(ctx: ToolContext, server: str) -> None:
    # urllib itself follows redirects to ftp://; the tool must not.
    ftp = await fetch(ctx, f"{server}/to-ftp")
    assert not ftp.ok and "refused redirect" in ftp.content and "'ftp'" in ftp.content
    local = await fetch(ctx, f"{server}/to-file")
    assert not local.ok and "/etc/passwd" in local.content and "root:" not in local.content


async def test_connection_refused_and_timeout(ctx: ToolContext, server: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    refused = await fetch(ctx, f"http://127.0.0.1:{port}/")
    assert not refused.ok and "could not fetch" in refused.content
    assert "refused" in refused.content.lower()
    quick = FetchUrl()
    quick.timeout_seconds = 0.3
    slow = await fetch(ctx, f"{server}/slow", quick)
    assert not slow.ok and "timed out after 0.3 s" in slow.content


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "scheme: 'file'"),
        ("ftp://example.com/x", "scheme: 'ftp'"),
        ("example.com", "scheme: none"),
        ("http://", "no host"),
        ("http://user:secret@example.com/", "credentials"),
        ("http://example.com:port/", "not a valid URL"),
    ],
)
async def test_refused_urls(ctx: ToolContext, url: str, message: str) -> None:
    out = await fetch(ctx, url)
    assert not out.ok and message in out.content
