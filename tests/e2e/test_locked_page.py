"""Chromium opening the server's address without the launch link sees how to get in."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.conftest import SparrowServer

pytestmark = pytest.mark.e2e


def test_a_browser_without_the_token_is_told_how_to_get_in(
    browser: Browser, sparrow_server: SparrowServer
) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        answer = page.goto(sparrow_server.base_url + "/")
        assert answer is not None and answer.status == 401
        expect(page.get_by_test_id("locked-title")).to_have_text(
            "This Sparrow needs its launch link"
        )
        expect(page.locator("body")).to_contain_text("sparrow-desktop --headless")
        # The launch link still opens the app in the same browser.
        page.goto(sparrow_server.launch_url)
        expect(page.get_by_test_id("run-form")).to_be_visible()
    finally:
        context.close()
