"""The web UI's stylesheets as the app serves them: one sheet per view or
component, no build step. index.html links css/app.css, which imports every
one of them, once, in cascade order (the tokens first), and which the app
answers with the sheets inlined; only tokens.css may set the theme."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from server.web.static import ui_dir

LINK = re.compile(r'<link rel="stylesheet" href="(css/[^"]+)">')
IMPORT = re.compile(r'@import url\("([^"]+)"\);')


def test_app_css_imports_every_stylesheet_once_and_the_app_inlines_them(
    client: TestClient,
) -> None:
    assert LINK.findall(client.get("/").text) == ["css/app.css"]
    manifest = (ui_dir() / "css" / "app.css").read_text()
    imported = IMPORT.findall(manifest)
    on_disk = sorted(s.name for s in (ui_dir() / "css").glob("*.css") if s.name != "app.css")
    assert len(on_disk) > 10
    assert sorted(imported) == on_disk
    assert len(set(imported)) == len(imported)
    # Every other sheet uses the tokens; the components build on the base and the layout.
    assert imported[:3] == ["tokens.css", "base.css", "layout.css"]
    served = client.get("/css/app.css")
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("text/css")
    assert "@import" not in served.text
    expected = "".join(
        f"/* {name} */\n" + (ui_dir() / "css" / name).read_text() + "\n" for name in imported
    )
    assert served.text == expected
    for name in imported:  # each sheet is there too, for a server that does not inline
        answer = client.get(f"/css/{name}")
        assert answer.status_code == 200, name
        assert answer.headers["content-type"].startswith("text/css"), name


STATIC_IMPORT = re.compile(
    r'(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"\./([\w-]+\.js)"|(?:^|\n)\s*import\s+"\./([\w-]+\.js)"',
    re.S,
)
DYNAMIC_IMPORT = re.compile(r'import\("\./([\w-]+\.js)"\)')


def _static_graph(entry: str) -> set[str]:
    """The modules ``entry`` imports statically, directly or not (itself included)."""
    seen: set[str] = set()
    todo = [entry]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            text = (ui_dir() / "js" / name).read_text()
            todo += [a or b for a, b in STATIC_IMPORT.findall(text)]
    return seen


def test_index_preloads_what_the_page_starts_with_and_no_more(client: TestClient) -> None:
    """A module not preloaded is fetched only once the one importing it is parsed:
    a round trip more before the page can start (contextbar.js and bar.js were).
    A view loaded when first shown (ui/js/lazyview.js) is not preloaded: that
    would fetch it at the start all the same."""
    page = client.get("/").text
    preloaded = set(re.findall(r'<link rel="modulepreload" href="js/([^"]+)">', page))
    entry = set(re.findall(r'<script type="module" src="js/([^"]+)">', page))
    assert entry == {"main.js"}
    at_start = _static_graph("main.js")
    assert preloaded == at_start - entry
    lazy = set(DYNAMIC_IMPORT.findall((ui_dir() / "js" / "main.js").read_text()))
    assert {"settings.js", "monitor.js", "rules.js"} <= lazy
    later: set[str] = set().union(*(_static_graph(view) for view in lazy))
    on_disk = {module.name for module in (ui_dir() / "js").glob("*.js")}
    assert len(on_disk) > 10
    assert on_disk == at_start | later  # every module is used, at the start or later


def test_only_the_tokens_sheet_sets_the_theme() -> None:
    for sheet in (ui_dir() / "css").glob("*.css"):
        if sheet.name != "tokens.css":
            assert ":root" not in sheet.read_text(), sheet.name
