"""Uploads and the chips' words over HTTP, against the real app: auth, the
size cap, names that try to leave the uploads folder, and a run that sends
an upload to a model that takes images (and one that does not)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from server.core.paths import Paths
from server.engine.attachments.uploads import prune, uploads_dir
from tests.engine.attachments.images import image_bytes
from tests.web.test_api import wait_finished

PNG = image_bytes()


def upload(client: TestClient, name: str, data: bytes) -> dict[str, object]:
    response = client.post(
        "/api/uploads", content=data, headers={"x-sparrow-filename": quote(name)}
    )
    assert response.status_code == 201, response.text
    stored: dict[str, object] = response.json()["upload"]
    return stored


def test_uploads_need_the_token(anonymous: TestClient, paths: Paths) -> None:
    response = anonymous.post(
        "/api/uploads", content=b"hello", headers={"x-sparrow-filename": "a.txt"}
    )
    assert response.status_code == 401
    assert anonymous.post("/api/attachments/describe", json={"attachments": []}).status_code == 401
    assert not uploads_dir(paths.state).exists()


def test_an_upload_over_the_cap_is_413_and_nothing_is_kept(
    client: TestClient, paths: Paths, sparrow_home: Path
) -> None:
    config = sparrow_home / "config" / "config.toml"
    config.write_text(config.read_text() + "\n[attachments]\nupload_limit_bytes = 1000\n")
    response = client.post(
        "/api/uploads", content=b"x" * 1001, headers={"x-sparrow-filename": "big.txt"}
    )
    assert response.status_code == 413
    assert "larger than 1,000 bytes" in response.json()["error"]

    def no_length() -> Iterator[bytes]:  # a streamed body: no Content-Length to refuse it by
        yield b"x" * 600
        yield b"x" * 600

    streamed = client.post(
        "/api/uploads", content=no_length(), headers={"x-sparrow-filename": "big.txt"}
    )
    assert streamed.status_code == 413
    assert not any(uploads_dir(paths.state).glob("*/*"))
    assert upload(client, "fits.txt", b"x" * 1000)["size"] == 1000


@pytest.mark.parametrize(
    "name", ["../../config/config.toml", "..", "/etc/passwd", "..\\..\\evil.txt", "a/../../b"]
)
def test_a_name_cannot_leave_the_uploads_folder(
    client: TestClient, paths: Paths, name: str
) -> None:
    stored = upload(client, name, b"data")
    root = uploads_dir(paths.state).resolve()
    files = [p for p in root.rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].parent.parent == root
    assert files[0].read_bytes() == b"data" and stored["name"] == files[0].name
    assert (paths.config / "config.toml").read_text() != "data"


def test_an_upload_without_a_name_is_refused(client: TestClient) -> None:
    response = client.post("/api/uploads", content=b"data")
    assert response.status_code == 400 and "x-sparrow-filename" in response.json()["error"]


def test_old_uploads_are_pruned(client: TestClient, paths: Paths) -> None:
    upload(client, "old.txt", b"old")
    assert prune(paths.state, 24.0, now=time.time() + 25 * 3600) == 1
    assert not any(uploads_dir(paths.state).iterdir())


def test_describe_says_how_each_would_be_sent(
    client: TestClient, tmp_path: Path, paths: Paths
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("hi\n")
    blob = tmp_path / "a.out"
    blob.write_bytes(b"\x00\x01")
    image = upload(client, "pasted.png", PNG)

    def describe(model: object, **extra: object) -> list[dict[str, object]]:
        refs = [str(notes), str(blob), image["ref"], str(paths.database), "upload:u" + "0" * 20]
        body = {"attachments": refs, "model": model, **extra}
        response = client.post("/api/attachments/describe", json=body)
        assert response.status_code == 200, response.text
        found: list[dict[str, object]] = response.json()["attachments"]
        return found

    chips = describe("script", script={"turns": [], "images": True})
    assert [c["label"] for c in chips[:3]] == ["inline", chips[1]["label"], "image"]
    assert chips[1]["how"] == "refused" and "NUL bytes" in str(chips[1]["reason"])
    assert chips[2]["name"] == "pasted.png" and chips[2]["ref"] == image["ref"]
    assert "own state folder" in str(chips[3]["reason"])
    assert "no such upload" in str(chips[4]["reason"])
    refused = describe("demo")[2]
    assert refused["how"] == "refused" and "demo does not take images" in str(refused["reason"])
    assert describe(None)[2]["how"] == "image"  # the model is chosen when the run starts


def test_a_run_sends_an_upload_as_an_image_only_to_a_model_that_takes_images(
    client: TestClient, workspace: Path
) -> None:
    image = upload(client, "pasted.png", PNG)
    script = {"turns": [{"text": "A red square."}], "images": True}
    created = client.post("/api/runs", json={
        "workspace": str(workspace), "task": "what is this?", "model": "script",
        "script": script, "attachments": [image["ref"]],
    })
    assert created.status_code == 201, created.text
    run = created.json()["run"]
    assert wait_finished(client, run["id"])["status"] == "completed"
    sent = client.get(f"/api/runs/{run['id']}/requests/1").json()["request"]
    (attached,) = sent["messages"][0]["attachments"]
    assert attached["media_type"] == "image/png" and attached["size"] == len(PNG)

    refused = client.post("/api/runs", json={
        "workspace": str(workspace), "task": "what is this?", "model": "script",
        "script": {"turns": [{"text": "?"}]}, "attachments": [image["ref"]],
    })
    assert refused.status_code == 400
    assert "does not take images" in refused.json()["error"]
    bad = client.post("/api/runs", json={
        "workspace": str(workspace), "task": "t", "attachments": "not a list",
    })
    assert bad.status_code == 400 and "'attachments' must be a list" in bad.json()["error"]
