"""Opening the server without its token: a browser's page load gets a page that
says how to get in; the API and scripts keep their JSON 401."""

from __future__ import annotations

from starlette.testclient import TestClient

HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def test_a_page_load_without_the_token_gets_the_way_in(anonymous: TestClient) -> None:
    for path in ("/", "/index.html", "/js/main.js"):
        answer = anonymous.get(path, headers=HTML)
        assert answer.status_code == 401
        assert answer.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in answer.headers["content-security-policy"]
        page = answer.text
        assert "This Sparrow needs its launch link" in page
        assert "--headless" in page and "make run" in page and "?token=" in page


def test_a_wrong_token_in_the_link_gets_the_page_too(anonymous: TestClient) -> None:
    answer = anonymous.get("/?token=an-old-token-from-yesterday", headers=HTML)
    assert answer.status_code == 401
    assert "launch link" in answer.text


def test_the_api_and_scripts_keep_their_json(anonymous: TestClient) -> None:
    for path, headers in (("/api/health", HTML), ("/", {"accept": "application/json"}), ("/", {})):
        answer = anonymous.get(path, headers=headers)
        assert answer.status_code == 401
        assert answer.json() == {"error": "missing or wrong launch token"}
    posted = anonymous.post("/", headers=HTML)
    assert posted.status_code == 401 and "error" in posted.json()
