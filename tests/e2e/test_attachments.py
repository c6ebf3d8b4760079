"""Attachments in the browser, against the real server and a local server that
speaks a vendor's wire format: an image pasted into the composer is uploaded,
shown as a chip, and reaches a model that takes images as an image part (on
the wire); for a model that does not, the chip says why and nothing is sent.
A file dropped on the page (a plain browser: uploaded) is inlined."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import OpenApp, SparrowServer, autonomous_server
from tests.e2e.test_conversations import ends, start
from tests.engine.attachments.images import image_bytes
from tests.fakes.script import Reply
from tests.fakes.vendors import FakeVendor

pytestmark = pytest.mark.e2e

PNG = image_bytes(size=(24, 16))
CHAT = "/v1/chat/completions"


@pytest.fixture(scope="module")
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor(models=["vision", "text-only"]) as fake:
        yield fake


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, vendor: FakeVendor) -> Iterator[SparrowServer]:
    endpoint = (
        f'[providers.fake]\nbase_url = "{vendor.base_url}/v1"\nkind = "openai-chat"\n'
        + 'label = "Fake vendor"\n'
        + '[models.images]\n"fake:vision" = true\n'
    )
    with autonomous_server(tmp_path_factory, endpoint) as running:
        yield running



PASTE = """([target, b64]) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], "image.png", { type: "image/png" }));
  const init = { clipboardData: data, bubbles: true, cancelable: true };
  const event = new ClipboardEvent("paste", init);
  document.querySelector(target).dispatchEvent(event);
  return event.defaultPrevented;
}"""


def paste_image(page: Page, target: str) -> None:
    prevented = page.evaluate(PASTE, [target, base64.b64encode(PNG).decode()])
    assert prevented, "the composer did not take the pasted image"


def chips(page: Page, where: str) -> list[str]:
    return [
        chip.inner_text().replace("\n", " ")
        for chip in page.get_by_test_id(where).get_by_test_id("attach-chip").all()
    ]


def test_a_pasted_image_reaches_a_model_that_takes_images_as_an_image_part(
    open_app: OpenApp, vendor: FakeVendor, workspace: Path, artifacts: Path
) -> None:
    vendor.script(Reply(text="Hello."), Reply(text="A small pink rectangle."))
    page = open_app()
    start(page, workspace, "hello", "fake:vision")
    ends(page, 1)
    paste_image(page, "#composer-input")
    chip = page.get_by_test_id("composer-attachments").get_by_test_id("attach-chip")
    expect(chip).to_have_attribute("data-how", "image")
    expect(chip.get_by_test_id("attach-name")).to_have_text("image.png")
    page.get_by_test_id("composer-input").fill("What is in this picture?")
    page.screenshot(path=str(artifacts / "composer-image-chip.png"))
    page.get_by_test_id("composer-send").click()
    ends(page, 2)
    expect(chip).to_have_count(0)  # sent: the composer starts bare again
    # The follow-up in the conversation shows what went with it.
    sent = page.get_by_test_id("task-entry").last.get_by_test_id("task-attachments")
    expect(sent).to_contain_text("image.png")
    page.reload()
    expect(page.get_by_test_id("task-attachments")).to_have_count(1)
    page.screenshot(path=str(artifacts / "conversation-attachment.png"))

    body = vendor.last(CHAT).body
    last_user = [m for m in body["messages"] if m["role"] == "user"][-1]
    parts = last_user["content"]
    assert isinstance(parts, list)
    images = [p for p in parts if p.get("type") == "image_url"]
    assert len(images) == 1
    encoded = base64.b64encode(PNG).decode()
    assert images[0]["image_url"]["url"] == f"data:image/png;base64,{encoded}"
    assert any("What is in this picture?" in p.get("text", "") for p in parts)


def test_a_pasted_image_is_refused_with_the_reason_for_a_model_without_images(
    open_app: OpenApp, vendor: FakeVendor, workspace: Path
) -> None:
    vendor.script(Reply(text="Hello."))
    page = open_app()
    start(page, workspace, "hello", "fake:text-only")
    ends(page, 1)
    asked = len(vendor.requests)
    paste_image(page, "#composer-input")
    chip = page.get_by_test_id("composer-attachments").get_by_test_id("attach-chip")
    expect(chip).to_have_attribute("data-how", "refused")
    expect(chip.get_by_test_id("attach-how")).to_contain_text(
        "fake:text-only does not take images"
    )
    page.get_by_test_id("composer-input").fill("and this?")
    page.get_by_test_id("composer-send").click()
    expect(page.get_by_test_id("composer-error")).to_contain_text("Remove what cannot be sent")
    assert len(vendor.requests) == asked  # nothing went to the model
    # Removed, the follow-up goes without it.
    vendor.script(Reply(text="Fine."))
    chip.get_by_test_id("attach-remove").click()
    expect(chip).to_have_count(0)
    page.get_by_test_id("composer-send").click()
    ends(page, 2)
    assert "image_url" not in json.dumps(vendor.last(CHAT).body)


DROP = """([name, text]) => {
  const data = new DataTransfer();
  data.items.add(new File([text], name, { type: "text/plain" }));
  const event = new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true });
  document.querySelector("main").dispatchEvent(event);
}"""


def test_a_file_dropped_on_a_browser_page_is_uploaded_and_inlined(
    open_app: OpenApp, vendor: FakeVendor, workspace: Path, artifacts: Path
) -> None:
    vendor.script(Reply(text="It says to buy milk."))
    page = open_app()
    page.evaluate(DROP, ["todo.txt", "buy milk\n"])
    chip = page.get_by_test_id("run-attachments").get_by_test_id("attach-chip")
    expect(chip).to_have_attribute("data-how", "inline")
    expect(chip).to_contain_text("todo.txt")
    start(page, workspace, "What does the note say?", "fake:text-only")
    ends(page, 1)
    wire = json.dumps(vendor.last(CHAT).body)
    assert "buy milk" in wire and "What does the note say?" in wire
    # The model is told the upload's name, not where Sparrow's state folder keeps it.
    assert "todo.txt (uploaded)" in wire and "/uploads/" not in wire

    # The Request view shows it as sent (the transcript holds only its hash).
    page.get_by_test_id("assistant-message").last.hover()
    page.get_by_test_id("show-request").last.click()
    dialog = page.get_by_test_id("request-dialog")
    expect(dialog.get_by_test_id("request-attachment")).to_contain_text("todo.txt")
    expect(dialog.get_by_test_id("request-attachment")).to_contain_text("sha256")
    dialog.locator("summary", has_text="Show the attachment as sent").click()
    expect(dialog.get_by_test_id("request-attachment-text")).to_contain_text("buy milk")
    page.screenshot(path=str(artifacts / "request-dialog-attachment.png"))
