from __future__ import annotations

import pytest

from desktop import navigation
from desktop.navigation import Verdict, is_external_url, verdict

OWN = "http://127.0.0.1:4321"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:4321/",
        "http://127.0.0.1:4321/?token=abc",
        "http://127.0.0.1:4321/#run=r-1",
        "HTTP://127.0.0.1:4321/ui/x.js",
        "about:blank",
    ],
)
def test_own_pages_load_in_the_window(url: str) -> None:
    assert verdict(url, OWN, user_clicked=False) is Verdict.ALLOW


@pytest.mark.parametrize(
    "url",
    ["https://example.com/docs", "http://example.com", "mailto:someone@example.com"],
)
def test_clicked_outside_links_go_to_the_browser(url: str) -> None:
    assert verdict(url, OWN, user_clicked=True) is Verdict.EXTERNAL


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",  # a script-driven redirect, not a click
        "http://127.0.0.1:9999/",  # another port is another origin
        "http://localhost:4321/",  # another name for the same server: not this window's origin
        "https://127.0.0.1:4321/",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,hi",
        "http://127.0.0.1:99999/",  # malformed port
    ],
)
def test_everything_else_is_refused(url: str) -> None:
    assert verdict(url, OWN, user_clicked=False) is Verdict.BLOCK


def test_unsafe_schemes_are_refused_even_when_clicked() -> None:
    for url in ("file:///etc/passwd", "javascript:alert(1)", "ftp://example.com/"):
        assert verdict(url, OWN, user_clicked=True) is Verdict.BLOCK


def test_frames_never_open_the_browser() -> None:
    assert verdict("https://example.com/", OWN, user_clicked=True, main_frame=False) is (
        Verdict.BLOCK
    )


def test_only_web_and_mail_urls_count_as_external() -> None:
    assert is_external_url("https://example.com/a?b")
    assert is_external_url("mailto:a@example.com")
    assert not is_external_url("mailto:")
    assert not is_external_url("https://")
    assert not is_external_url("file:///tmp/x")
    assert not is_external_url("not a url")


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    urls: list[str] = []

    def fake_open(url: str, new: int = 0, autoraise: bool = True) -> bool:
        urls.append(url)
        return True

    monkeypatch.setattr(navigation.webbrowser, "open", fake_open)
    monkeypatch.setattr(navigation, "_throttle", navigation._Throttle(60.0))
    return urls


def test_open_external_refuses_other_schemes(opened: list[str]) -> None:
    assert not navigation.open_external("file:///etc/passwd")
    assert navigation.open_external("https://example.com/")
    assert opened == ["https://example.com/"]


def test_a_page_cannot_flood_the_browser(opened: list[str]) -> None:
    assert navigation.open_external("https://example.com/1")
    assert not navigation.open_external("https://example.com/2")
    assert opened == ["https://example.com/1"]
