"""``sparrow run`` with something to ask: denied off a terminal (with a hint),
allowed with --yes, and asked on a real pseudo-terminal."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import SPARROW, ndjson, sparrow

DEMO_FILE = "SPARROW_DEMO.md"
PROMPT = b"[o]nce / [a]lways / [n]o: "
HINT = "would ask; not interactive, so it was denied (add --yes to allow such calls)"


def test_not_interactive_denies_with_a_hint_and_completes(workspace: Path) -> None:
    result = sparrow("run", "--demo", "-w", str(workspace), "--mode", "supervised", "hi")
    assert not (workspace / DEMO_FILE).exists()
    assert result.stderr.count(HINT) == 1  # once, though the shell command asked too
    assert f"write_file, run_shell {HINT}" in result.stderr
    assert "? asks: " in result.stdout and "● completed" in result.stdout
    assert "✗ denied by non-interactive" in result.stdout


def test_yes_allows_once_and_the_events_say_so(workspace: Path) -> None:
    args = ("run", "--demo", "-w", str(workspace), "--mode", "supervised", "--yes", "--json")
    events = ndjson(sparrow(*args, "hi").stdout)
    assert (workspace / DEMO_FILE).is_file()
    gates = [e for e in events if e["type"] == "gate_decided" and e["tool"] == "write_file"]
    assert gates[0]["decision"] == "ask" and gates[0]["mode"] == "supervised"
    resolved = [e for e in events if e["type"] == "approval_resolved"]
    assert resolved and all(e["decision"] == "allow_once" for e in resolved)
    assert events[-1]["status"] == "completed"


def test_run_options_are_checked(workspace: Path) -> None:
    for args, message in (
        (("--mode", "yolo"), "unknown permission mode"),
        (("--autonomy", "3"), "from 0.0 to 1.0"),
        (("--sandbox", "nowhere"), "nowhere"),
    ):
        result = sparrow("run", "--demo", "-w", str(workspace), *args, "hi", check=False)
        assert result.returncode == 2 and message in result.stderr, result.stderr


def test_a_rule_from_the_cli_allows_without_asking(workspace: Path) -> None:
    sparrow("permissions", "allow", f"write_file({DEMO_FILE})", "-w", str(workspace))
    result = sparrow("run", "--demo", "-w", str(workspace), "--mode", "supervised", "hi")
    assert (workspace / DEMO_FILE).is_file()
    assert f"gate: allowed by rule write_file({DEMO_FILE})" in result.stdout


def run_on_a_terminal(workspace: Path, answers: list[bytes]) -> tuple[int, str]:
    """`sparrow run --demo --mode supervised` on a pseudo-terminal, answering each
    prompt (o/a/n, and the follow-up questions) from ``answers`` in turn."""
    if sys.platform == "win32":
        pytest.skip("no pseudo-terminals on Windows")
    master, slave = os.openpty()
    args = [SPARROW, "run", "--demo", "-w", str(workspace), "--mode", "supervised", "hi"]
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    seen = b""
    pending = list(answers)
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            assert ready, f"no output for a minute; so far:\n{seen.decode(errors='replace')}"
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's last user is gone
                break
            if not chunk:
                break
            seen += chunk
            # Answer every question shown and not answered yet.
            while pending and _asked(seen) > len(answers) - len(pending):
                os.write(master, pending.pop(0) + b"\n")
        code = proc.wait(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, seen.decode("utf-8", "replace")


def _asked(seen: bytes) -> int:
    """How many questions the terminal has been asked so far."""
    questions = (PROMPT, b"[s]ession: ", b"(optional): ")
    return sum(seen.count(q) for q in questions)


def test_a_terminal_asks_and_once_allows(workspace: Path) -> None:
    code, screen = run_on_a_terminal(workspace, [b"o", b"o"])
    assert code == 0, screen
    assert (workspace / DEMO_FILE).is_file()
    assert screen.count("[o]nce / [a]lways / [n]o:") == 2
    assert "? write_file [Mutating]" in screen and "allow always would save" in screen
    assert "allowed once by cli" in screen and "● completed" in screen
    assert "? asks: " not in screen  # the prompt shows the question; the renderer does not
    assert HINT not in screen


def test_a_terminal_always_saves_a_rule_and_no_denies(workspace: Path) -> None:
    # write_file: always, for this workspace (the default); run_shell: no, with a message.
    code, screen = run_on_a_terminal(workspace, [b"a", b"", b"n", b"not now"])
    assert code == 0, screen
    assert (workspace / DEMO_FILE).is_file()
    assert "denied by cli: not now" in screen
    rules = ndjson(sparrow("permissions", "list", "-w", str(workspace), "--json").stdout)
    saved = [r for r in rules if r["spec"] == f"write_file({DEMO_FILE})"]
    assert saved and saved[0]["scope"] == "workspace" and saved[0]["effect"] == "allow"


def test_an_unanswered_terminal_question_times_out(workspace: Path, sparrow_home: Path) -> None:
    config = sparrow_home / "config" / "config.toml"
    config.write_text(config.read_text() + "\n[permissions]\napproval_timeout_seconds = 0.5\n")
    code, screen = run_on_a_terminal(workspace, [])
    assert code == 0, screen
    assert not (workspace / DEMO_FILE).exists()
    assert screen.count("(no answer: the question was withdrawn)") == 2
    assert "nobody answered the approval request" in screen
