"""The web UI's stylesheets as the app serves them: one sheet per view or
component, no build step, so index.html must link every one of them, once, in
cascade order (the tokens first), and only tokens.css may set the theme."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from server.web.static import ui_dir

LINK = re.compile(r'<link rel="stylesheet" href="(css/[^"]+)">')


def test_index_links_every_stylesheet_once_and_the_app_serves_each(client: TestClient) -> None:
    linked = LINK.findall(client.get("/").text)
    on_disk = sorted(f"css/{sheet.name}" for sheet in (ui_dir() / "css").glob("*.css"))
    assert len(on_disk) > 10
    assert sorted(linked) == on_disk
    assert len(set(linked)) == len(linked)
    # Every other sheet uses the tokens; the components build on the base and the layout.
    assert linked[:3] == ["css/tokens.css", "css/base.css", "css/layout.css"]
    for href in linked:
        answer = client.get(f"/{href}")
        assert answer.status_code == 200, href
        assert answer.headers["content-type"].startswith("text/css"), href


def test_index_preloads_every_module(client: TestClient) -> None:
    """A module not preloaded is fetched only once the one importing it is parsed:
    a round trip more before the page can start (contextbar.js and bar.js were)."""
    page = client.get("/").text
    preloaded = set(re.findall(r'<link rel="modulepreload" href="(js/[^"]+)">', page))
    entry = set(re.findall(r'<script type="module" src="(js/[^"]+)">', page))
    on_disk = {f"js/{module.name}" for module in (ui_dir() / "js").glob("*.js")}
    assert len(on_disk) > 10 and entry == {"js/main.js"}
    assert on_disk - preloaded - entry == set()
    assert preloaded - on_disk == set()


def test_only_the_tokens_sheet_sets_the_theme() -> None:
    for sheet in (ui_dir() / "css").glob("*.css"):
        if sheet.name != "tokens.css":
            assert ":root" not in sheet.read_text(), sheet.name
