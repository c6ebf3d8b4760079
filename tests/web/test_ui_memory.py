"""The UI's files answered from memory (server/web/ui_files.py): what a browser
gets must be what is on disk now, with the same refusals StaticFiles made."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from server.web.ui_files import SECURITY_HEADERS, UIFiles


@pytest.fixture
def ui(tmp_path: Path) -> Path:
    folder = tmp_path / "ui"
    (folder / "js").mkdir(parents=True)
    (folder / "css").mkdir()
    (folder / "index.html").write_text("<!doctype html><title>page</title>")
    (folder / "js" / "main.js").write_text("export const answer = 1;\n")
    (folder / "css" / "app.css").write_text("body { color: black; }\n")
    return folder


@pytest.fixture
def client(ui: Path) -> Iterator[TestClient]:
    app = Starlette(routes=[Mount("/", UIFiles(ui))])
    with TestClient(app) as test_client:
        yield test_client


def _later(path: Path) -> None:
    """Move the file's time on, as an edit a second later would."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_each_file_comes_with_its_type_and_the_headers(client: TestClient) -> None:
    for path, kind, body in (
        ("/", "text/html", "<title>page</title>"),
        ("/index.html", "text/html", "<title>page</title>"),
        ("/js/main.js", "javascript", "answer = 1"),
        ("/css/app.css", "text/css", "color: black"),
    ):
        answer = client.get(path)
        assert answer.status_code == 200, path
        assert kind in answer.headers["content-type"], path
        assert body in answer.text, path
        for name, value in SECURITY_HEADERS.items():
            assert answer.headers[name] == value, (path, name)


def test_a_file_edited_after_it_was_served_is_served_as_it_is_now(
    client: TestClient, ui: Path
) -> None:
    script = ui / "js" / "main.js"
    first = client.get("/js/main.js")
    script.write_text("export const answer = 2; // edited, and longer\n")
    assert "answer = 2" in client.get("/js/main.js").text
    # Same size, only the time moved: still read again.
    script.write_text("export const answer = 3; // edited, and longer\n")
    _later(script)
    second = client.get("/js/main.js")
    assert "answer = 3" in second.text
    assert second.headers["etag"] != first.headers["etag"]


def test_an_unchanged_file_is_not_sent_again(client: TestClient, ui: Path) -> None:
    tag = client.get("/css/app.css").headers["etag"]
    assert client.get("/css/app.css", headers={"if-none-match": tag}).status_code == 304
    (ui / "css" / "app.css").write_text("body { color: red; }\n")
    _later(ui / "css" / "app.css")
    again = client.get("/css/app.css", headers={"if-none-match": tag})
    assert again.status_code == 200 and "red" in again.text


def test_a_file_removed_after_it_was_served_is_gone(client: TestClient, ui: Path) -> None:
    assert client.get("/js/main.js").status_code == 200
    (ui / "js" / "main.js").unlink()
    assert client.get("/js/main.js").status_code == 404


def test_what_is_not_a_file_of_the_folder_is_refused(client: TestClient, ui: Path) -> None:
    secret = ui.parent / "secret.txt"
    secret.write_text("not for the page")
    (ui / "js" / "escape.txt").symlink_to(secret)
    assert client.get("/nothing.js").status_code == 404
    assert client.get("/js/escape.txt").status_code == 404  # leads out of the folder
    assert client.get("/js/../../secret.txt").status_code == 404
    assert client.get("/%2e%2e/secret.txt").status_code == 404
    assert client.post("/js/main.js").status_code == 405


def test_head_answers_without_a_body(client: TestClient) -> None:
    answer = client.head("/js/main.js")
    assert answer.status_code == 200
    assert answer.content == b""
    assert int(answer.headers["content-length"]) == len(b"export const answer = 1;\n")


# --- a stylesheet of imports --------------------------------------------------


def _manifest(ui: Path, text: str) -> None:
    (ui / "css" / "tokens.css").write_text(":root { --ink: black; }\n")
    (ui / "css" / "all.css").write_text(text)


def test_a_sheet_of_imports_is_answered_with_them_inlined_in_order(
    client: TestClient, ui: Path
) -> None:
    _manifest(ui, '/* the order */\n@import url("tokens.css");\n\n@import url("app.css");\n')
    answer = client.get("/css/all.css")
    assert answer.text == (
        "/* tokens.css */\n:root { --ink: black; }\n\n"
        "/* app.css */\nbody { color: black; }\n\n"
    )
    assert answer.headers["content-type"].startswith("text/css")


def test_an_edit_of_an_imported_sheet_shows_in_the_next_answer(
    client: TestClient, ui: Path
) -> None:
    _manifest(ui, '@import url("tokens.css");\n@import url("app.css");\n')
    tag = client.get("/css/all.css").headers["etag"]
    (ui / "css" / "app.css").write_text("body { color: red; }\n")
    _later(ui / "css" / "app.css")
    answer = client.get("/css/all.css", headers={"if-none-match": tag})
    assert answer.status_code == 200
    assert "color: red" in answer.text


@pytest.mark.parametrize(
    "text",
    [
        '@import url("tokens.css");\nbody { margin: 0; }\n',  # a rule besides the imports
        '@import url("tokens.css") screen;\n',  # a condition the browser must apply
        '@import url("missing.css");\n',  # for the browser to report
        '@import url("../secret.css");\n',  # out of the folder: never read here
        "/* nothing but a comment */\n",
    ],
)
def test_any_other_sheet_is_served_as_it_is(client: TestClient, ui: Path, text: str) -> None:
    (ui.parent / "secret.css").write_text("secret { }")
    _manifest(ui, text)
    assert client.get("/css/all.css").text == text
