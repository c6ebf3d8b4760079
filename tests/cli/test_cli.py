"""The CLI as a user runs it: the installed ``sparrow`` script in a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from server.cli import main

SPARROW = shutil.which("sparrow", path=str(Path(sys.executable).parent)) or "sparrow"


def sparrow(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([SPARROW, *args], capture_output=True, text=True, timeout=120)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def ndjson(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


DELTAS = ("text_delta", "thinking_delta", "tool_call_delta")


def semantic(
    events: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[tuple[str, int, str], str]]:
    """Events other than streamed deltas, and the text of each stream: what a surface
    shows. (A live reader may get consecutive deltas merged; the transcript has each one.)"""
    others = [e for e in events if e["type"] not in DELTAS]
    text: dict[tuple[str, int, str], str] = {}
    for e in events:
        if e["type"] in DELTAS:
            key = (e["type"], e["turn"], e.get("call_id", ""))
            text[key] = text.get(key, "") + e["text"]
    return others, text


def test_demo_run_then_replay_shows_the_same_events(workspace: Path) -> None:
    live = ndjson(
        sparrow("run", "--demo", "--workspace", str(workspace), "--json", "say hello").stdout
    )
    assert live[0]["type"] == "run_started" and live[-1]["type"] == "run_finished"
    assert live[-1]["status"] == "completed"
    tools = [e["tool"] for e in live if e["type"] == "tool_requested"]
    assert {"list_dir", "write_file", "read_file", "run_shell"} <= set(tools)
    assert all(e["ok"] for e in live if e["type"] == "tool_result")
    assert (workspace / "SPARROW_DEMO.md").is_file()

    run_id = live[0]["run_id"]
    replayed = ndjson(sparrow("replay", run_id, "--json").stdout)
    assert semantic(replayed) == semantic(live)
    human = sparrow("replay", run_id).stdout
    assert "▸ write_file [Mutating]" in human and "▸ run_shell [Exec]" in human
    assert "● completed" in human

    listing = sparrow("runs").stdout
    assert run_id in listing and "completed" in listing


def test_human_output_streams_text_and_tools(workspace: Path) -> None:
    result = sparrow("run", "--demo", "-w", str(workspace), "demo")
    assert "I'll start by looking at what is in the workspace." in result.stdout
    assert "✓ SPARROW_DEMO.md: created" in result.stdout
    assert "sparrow replay r-" in result.stderr


def test_a_script_file_reproduces_a_run(workspace: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "text": "Writing.",
                        "tool_calls": [
                            {"tool": "write_file", "args": {"path": "n.txt", "content": "1"}}
                        ],
                        "usage": {"input_tokens": 10, "output_tokens": 2},
                    },
                    {"text": "Done."},
                ]
            }
        )
    )
    events = ndjson(
        sparrow("run", "--script", str(script), "-w", str(workspace), "--json", "t").stdout
    )
    assert (workspace / "n.txt").read_text() == "1"
    usage = [e for e in events if e["type"] == "usage_reported"]
    assert usage[0]["input_tokens"] == 10


def test_a_script_that_runs_out_fails_the_run_with_exit_1(workspace: Path, tmp_path: Path) -> None:
    script = tmp_path / "short.json"
    script.write_text(
        json.dumps({"turns": [{"tool_calls": [{"tool": "list_dir", "args": {"path": "."}}]}]})
    )
    result = sparrow("run", "--script", str(script), "-w", str(workspace), "t", check=False)
    assert result.returncode == 1 and "no turn left" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "t", "-w", "/no/such/dir", "--demo"], "workspace not found"),
        (["run", "t", "-w", "/etc/hostname", "--demo"], "is a file, not a folder"),
        (["run", "t"], "say where to work: --workspace DIR (or --continue RUN_ID)"),
        (["run", "t", "-w", ".", "--model", "claude-sonnet-4-6"], "anthropic:claude-sonnet-4-6"),
        (["run", "t", "-w", ".", "-m", "openai:gpt-5"], "`sparrow keys set openai`"),
        (["run", "t", "--continue", "r-nope"], "no such run: r-nope"),
        (["run", "t", "-w", ".", "--script", "/no/script.json"], "cannot be read"),
        (["replay", "r-nope"], "no run 'r-nope'"),
    ],
)
def test_bad_input_gets_a_clear_message(args: list[str], message: str) -> None:
    result = sparrow(*args, check=False)
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr


def test_replay_skips_and_reports_a_damaged_line(workspace: Path) -> None:
    live = ndjson(sparrow("run", "--demo", "-w", str(workspace), "--json", "t").stdout)
    transcript = next(Path(r["transcript"]) for r in ndjson(sparrow("runs", "--json").stdout))
    with transcript.open("a") as handle:
        handle.write('{"type": "run_fini')
    result = sparrow("replay", live[0]["run_id"], "--json", check=False)
    assert result.returncode == 1 and "skipped: not valid JSON" in result.stderr
    assert len(ndjson(result.stdout)) == len(transcript.read_text().splitlines()) - 1


def test_runs_with_no_history_says_how_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs"]) == 0
    assert "sparrow run --demo" in capsys.readouterr().out


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("run", "replay", "runs"):
        assert command in out
