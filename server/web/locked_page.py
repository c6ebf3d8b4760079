"""The page a browser gets when it opens Sparrow's server without the launch token.

A person who types the address, or opens an old bookmark, sees how to get in
instead of ``{"error": ...}``. The token is never in it: the page cannot help
anyone who could not already read the launch line.
"""

from __future__ import annotations

from starlette.types import Send

LOCKED_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="dark light">
<title>Sparrow: open it with its launch link</title>
<style>
  body { font: 15px/1.55 system-ui, sans-serif; max-width: 40rem; margin: 12vh auto;
         padding: 0 1.5rem; color: #e7eaf0; background: #0e1014; }
  @media (prefers-color-scheme: light) { body { color: #1b1f27; background: #f7f8fa; } }
  h1 { font-size: 1.35rem; margin-bottom: .4rem; }
  code { font: 13px ui-monospace, monospace; padding: 1px 5px; border-radius: 4px;
         background: rgba(127, 127, 127, .18); }
  li { margin: .35rem 0; }
</style>
</head>
<body>
<h1 data-testid="locked-title">This Sparrow needs its launch link</h1>
<p>Sparrow's local server answers only the window or browser that opened it with
the link it printed at launch, which carries a secret token
(<code>http://127.0.0.1:PORT/?token=&hellip;</code>). The token changes at every
launch, so an old link or a bookmark no longer opens it.</p>
<p>To get in:</p>
<ul>
<li>open the Sparrow window (<code>sparrow-desktop</code>), or</li>
<li>open the link that <code>sparrow-desktop --headless</code> (or <code>make run</code>)
printed in its terminal: the line <code>Sparrow is serving at http://127.0.0.1:&hellip;</code>.</li>
</ul>
</body>
</html>
"""

# The page loads nothing and runs nothing.
_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"


async def send_page(send: Send, status: int, page: str) -> None:
    body = page.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"content-security-policy", _POLICY.encode()),
                (b"cache-control", b"no-store"),
                (b"referrer-policy", b"no-referrer"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
