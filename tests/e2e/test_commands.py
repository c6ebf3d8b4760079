"""The app's keyboard commands and outside links in a plain browser (the window's
own are in test_window_links.py): Ctrl+, opens Settings, Ctrl+O the workspace
field of a new conversation, Ctrl+N a new conversation; Ctrl+Q is left to the
browser; a link to another site opens a new tab and this page stays."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def test_the_keys_run_the_commands(app: Page) -> None:
    expect(app.get_by_test_id("connection-status")).to_have_attribute("data-state", "open")
    app.keyboard.press("Control+Comma")
    expect(app.get_by_test_id("settings")).to_be_visible()
    assert app.evaluate("location.hash") == "#settings"
    app.keyboard.press("Control+o")
    expect(app.get_by_test_id("workspace-input")).to_be_focused()
    assert app.evaluate("location.hash") == ""
    app.get_by_test_id("settings-tab").click()
    app.keyboard.press("Control+n")
    expect(app.get_by_test_id("prompt-input")).to_be_focused()
    # Ctrl+Q belongs to the browser: the page does not take it.
    taken = app.evaluate(
        "() => { const e = new KeyboardEvent('keydown', {key: 'q', ctrlKey: true, "
        "cancelable: true, bubbles: true}); document.body.dispatchEvent(e); "
        "return e.defaultPrevented; }"
    )
    assert taken is False


def test_an_outside_link_opens_a_new_tab_and_the_page_stays(app: Page) -> None:
    app.evaluate(
        "document.body.insertAdjacentHTML('afterbegin', "
        '\'<a id="outside" href="https://example.com/x" '
        'style="position:fixed;top:90px;left:90px;z-index:99">outside</a>\')'
    )
    # The outside site, offline here: answered in its place.
    app.context.route("https://example.com/**", lambda route: route.fulfill(body="elsewhere"))
    own = app.url
    with app.context.expect_page() as popup:
        app.click("#outside")
    expect(popup.value.locator("body")).to_have_text("elsewhere")
    assert popup.value.url == "https://example.com/x"
    popup.value.close()
    assert app.url == own
    # A link of the app's own still works in place.
    app.get_by_test_id("memory-tab").click()
    expect(app.get_by_test_id("memory")).to_be_visible()
