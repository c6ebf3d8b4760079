"""``sparrow run --attach``: the installed script in a subprocess, a real file,
a relative path taken from where the command runs, a refusal in one line."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from tests.cli.test_cli import SPARROW, ndjson
from tests.engine.attachments.images import image_bytes


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SPARROW, "run", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_attached_files_are_recorded_by_path_size_and_hash(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("milk, eggs\n")
    (tmp_path / "shot.png").write_bytes(image_bytes())
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "Noted."}], "images": True}))
    result = run(tmp_path, "--script", str(script), "-w", str(workspace), "--json",
                 "--attach", "notes.txt", "--attach", str(tmp_path / "shot.png"), "look")
    assert result.returncode == 0, result.stderr
    added = next(e for e in ndjson(result.stdout) if e["type"] == "message_added")
    recorded = added["message"]["attachments"]
    assert [(a["path"], a["media_type"]) for a in recorded] == [
        (str(tmp_path / "notes.txt"), "text/plain"), (str(tmp_path / "shot.png"), "image/png")
    ]
    assert recorded[0]["sha256"] == hashlib.sha256(b"milk, eggs\n").hexdigest()
    assert "milk, eggs" not in result.stdout


def test_a_refused_attachment_is_one_line_and_no_run(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(image_bytes())
    result = run(tmp_path, "--demo", "-w", str(workspace), "--attach", "shot.png", "look")
    assert result.returncode == 2
    assert "shot.png: demo does not take images" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
