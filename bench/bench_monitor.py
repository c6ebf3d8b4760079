"""The session monitor: a 400 MB transcript, 1,000 watched files, the hook.

(a) The current context of one 400 MB Claude Code transcript, cold (a reader
    that has never seen the file) and after an append (one more response
    written), against ``ccusage@18`` (npm, installed on demand into
    ``bench/.cache/``) computing the same session's figures from the same file
    in the same run: ``ccusage session --id`` (the session's usage, whose last
    entry is the context) and ``ccusage statusline`` (the context itself).
    ccusage is a process per answer and has no incremental mode: after an
    append it reads the whole file again. Goals: at least 100x faster cold,
    1000x after an append. Ours is measured in-process (what the monitor does);
    the whole ``sparrow hook claude-code`` process on the same file is (c).
(b) Resident memory of a process watching 1,000 session files (900 Claude
    Code, 100 Codex), above the same process idle. Goal: under 50 MB.
(c) The whole ``sparrow hook claude-code`` process on the 400 MB transcript,
    as Claude Code runs it after each tool call. Goal: under 100 ms.

Ratio = figure / goal (<= 1.0 meets it). Reports; asserts nothing.

    python -m bench.bench_monitor [--runs N] [--no-ccusage]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import row

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "ccusage"
CCUSAGE = "ccusage@18"
SESSION = "5d7c1a0e-3b2f-4c1d-9e8f-0a1b2c3d4e5f"
MODEL = "claude-sonnet-4-5-20250929"
SIZE = 400 * 1024 * 1024
MB = 1024 * 1024

COLD_GOAL = 100.0  # x faster than ccusage
APPEND_GOAL = 1000.0
MEMORY_GOAL_MB = 50.0
HOOK_GOAL_MS = 100.0
FILES = 1000


# --- transcripts ------------------------------------------------------------------------


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def assistant(tokens: int, n: int, ts: str, cwd: str = "/home/ada/src/engine") -> bytes:
    return _line(
        {
            "parentUuid": None,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": SESSION,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": "assistant",
            "uuid": f"a-{n}",
            "timestamp": ts,
            "requestId": f"req_{n}",
            "message": {
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{n}",
                        "name": "Bash",
                        "input": {"command": "make test"},
                    }
                ],
                "usage": {
                    "input_tokens": 8,
                    "cache_creation_input_tokens": 1_000,
                    "cache_read_input_tokens": tokens - 1_008,
                    "output_tokens": 120,
                },
            },
        }
    )


def tool_result(n: int, size: int, ts: str) -> bytes:
    body = ("x" * 79 + "\n") * (size // 80)
    return _line(
        {
            "parentUuid": None,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/ada/src/engine",
            "sessionId": SESSION,
            "version": "2.0.14",
            "type": "user",
            "uuid": f"u-{n}",
            "timestamp": ts,
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": body}],
            },
        }
    )


def write_transcript(path: Path, size: int, last_tokens: int) -> None:
    """``size`` bytes of a long session: tool outputs and responses, one 4 MB block
    written again and again, then a last response with ``last_tokens`` of context."""
    ts = _stamp()
    block = b"".join(tool_result(n, 40_000, ts) + assistant(60_000 + n, n, ts) for n in range(100))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        while handle.tell() < size:
            handle.write(block)
        handle.write(tool_result(999_998, 12_000, ts) + assistant(last_tokens, 999_999, ts))


# --- ccusage ----------------------------------------------------------------------------


def ccusage_script() -> Path | None:
    """ccusage@18's entry point, installed into bench/.cache/ on first use."""
    script = CACHE / "node_modules" / "ccusage" / "dist" / "index.js"
    if script.is_file():
        return script
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        print("  (node/npm not found: the ccusage anchor is skipped)")
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"  installing {CCUSAGE} into {CACHE} ...", flush=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", CCUSAGE],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or not script.is_file():
        print(f"  (npm install {CCUSAGE} failed: {done.stderr.strip()[-300:]})")
        return None
    return script


def ccusage_session(script: Path, config: Path) -> tuple[float, int | None]:
    """Seconds for ``ccusage session --id``, and the context its last entry gives."""
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config)}
    start = time.perf_counter()
    done = subprocess.run(
        ["node", str(script), "session", "--id", SESSION, "--json", "--offline"],
        capture_output=True,
        text=True,
        env=env,
    )
    seconds = time.perf_counter() - start
    try:
        last = json.loads(done.stdout)["entries"][-1]
        return seconds, last["inputTokens"] + last["cacheCreationTokens"] + last["cacheReadTokens"]
    except (ValueError, KeyError, IndexError, TypeError):
        print(f"  (ccusage session gave no figures: {done.stderr.strip()[-300:]})")
        return seconds, None


def ccusage_statusline(script: Path, config: Path, transcript: Path) -> tuple[float, int | None]:
    """Seconds for ``ccusage statusline`` (no cache), and the context it shows."""
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config)}
    hook = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": "/tmp",
        "model": {"id": MODEL, "display_name": "Sonnet 4.5"},
        "workspace": {"current_dir": "/tmp", "project_dir": "/tmp"},
        "version": "2.0.14",
    }
    start = time.perf_counter()
    done = subprocess.run(
        ["node", str(script), "statusline", "--no-cache", "--offline"],
        input=json.dumps(hook),
        capture_output=True,
        text=True,
        env=env,
    )
    seconds = time.perf_counter() - start
    found = re.search(r"🧠 ([\d,]+)", done.stdout)
    if not found:
        print(f"  (ccusage statusline gave no context: {(done.stdout + done.stderr)[-300:]!r})")
        return seconds, None
    return seconds, int(found.group(1).replace(",", ""))


# --- ours ---------------------------------------------------------------------------------


def ours_cold(transcript: Path, runs: int) -> tuple[float, int | None, int]:
    """Median seconds for a reader that has never seen the file; tokens; bytes read."""
    from server.monitor.reader import SessionReader
    from server.monitor.state import CLAUDE_CODE, SessionState

    times, tokens, read = [], None, 0
    for _ in range(runs):
        start = time.perf_counter()
        reader = SessionReader(SessionState(CLAUDE_CODE, str(transcript)))
        reader.refresh(history=False)
        times.append(time.perf_counter() - start)
        tokens, read = reader.state.context_tokens, reader.tail.bytes_read
    return statistics.median(times), tokens, read


def ours_append(transcript: Path, runs: int) -> tuple[float, int | None, Any]:
    """Median seconds to take in one appended response, the last figure, and the reader."""
    from server.monitor.reader import SessionReader
    from server.monitor.state import CLAUDE_CODE, SessionState

    reader = SessionReader(SessionState(CLAUDE_CODE, str(transcript)))
    reader.refresh()
    times = []
    for n in range(runs):
        with transcript.open("ab") as handle:
            handle.write(assistant(122_000 + n, 2_000_000 + n, _stamp()))
        start = time.perf_counter()
        reader.refresh()
        times.append(time.perf_counter() - start)
    return statistics.median(times), reader.state.context_tokens, reader


def hook_process(transcript: Path, runs: int) -> tuple[float, float, str]:
    """Median and best wall time of the whole ``sparrow hook claude-code`` process."""
    script = shutil.which("sparrow", path=str(Path(sys.executable).parent))
    if script is None:
        raise SystemExit("the sparrow script is not installed here: run `make bench`")
    home = tempfile.mkdtemp(prefix="sparrow-bench-hook-")
    env = {**os.environ, "SPARROW_HOME": home}
    times, out = [], ""
    try:
        for n in range(runs):
            payload = json.dumps(
                {
                    "session_id": f"bench-{n}",
                    "transcript_path": str(transcript),
                    "cwd": "/home/ada/src/engine",
                    "hook_event_name": "PostToolUse",
                    "tool_name": "Bash",
                    "tool_input": {},
                    "tool_response": {},
                }
            )
            start = time.perf_counter()
            done = subprocess.run(
                [script, "hook", "claude-code"],
                input=payload,
                capture_output=True,
                text=True,
                env=env,
            )
            times.append(time.perf_counter() - start)
            out = done.stdout
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return statistics.median(times), min(times), out


def startup_floor(runs: int) -> dict[str, float]:
    """Median process times of a bare interpreter and of the CLI doing nothing."""
    script = shutil.which("sparrow", path=str(Path(sys.executable).parent)) or "sparrow"
    found = {}
    for name, command in (
        ("python", [sys.executable, "-c", "pass"]),
        ("sparrow", [script, "--version"]),
    ):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(command, capture_output=True)
            times.append(time.perf_counter() - start)
        found[name] = statistics.median(times)
    return found


# --- (b) memory -------------------------------------------------------------------------


def write_sessions(root: Path, count: int) -> tuple[Path, Path]:
    claude, codex = root / "claude" / "projects", root / "codex" / "sessions"
    ts = _stamp()
    for n in range(count):
        if n % 10 == 9:  # one in ten a Codex rollout
            path = (
                codex
                / "2025"
                / "11"
                / f"{n % 28 + 1:02d}"
                / f"rollout-2025-11-01T00-00-00-{n:036d}.jsonl"
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = [
                {
                    "timestamp": ts,
                    "type": "session_meta",
                    "payload": {"id": str(n), "cwd": f"/srv/p{n}"},
                },
                {
                    "timestamp": ts,
                    "type": "turn_context",
                    "payload": {"model": "gpt-5-codex", "cwd": f"/srv/p{n}"},
                },
            ]
            for k in range(30):
                lines.append(
                    {
                        "timestamp": ts,
                        "type": "response_item",
                        "payload": {"type": "function_call_output", "output": "y" * 2_000},
                    }
                )
                lines.append(
                    {
                        "timestamp": ts,
                        "type": "event_msg",
                        "payload": {
                            "type": "token_count",
                            "info": {
                                "last_token_usage": {
                                    "input_tokens": 1_000 * k,
                                    "output_tokens": 50,
                                    "total_tokens": 1_000 * k + 50,
                                },
                                "total_token_usage": {"total_tokens": 10_000 * k},
                                "model_context_window": 272_000,
                            },
                        },
                    }
                )
            path.write_bytes(b"".join(_line(x) for x in lines))
        else:
            path = claude / f"-home-ada-p{n % 40}" / f"{n:08d}-0000-0000-0000-000000000000.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(
                b"".join(
                    tool_result(k, 2_000, ts)
                    + assistant(20_000 + 1_000 * k, k, ts, f"/home/ada/p{n}")
                    for k in range(30)
                )
            )
    return claude, codex


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for text in status:
            if text.startswith("VmRSS:"):
                return int(text.split()[1]) / 1024
    return 0.0


def memory_child(folder: str) -> None:
    """Run in a fresh process: RSS idle (everything imported, a monitor over an
    empty folder polled), then watching the 1,000 files (read, polled again)."""
    import gc

    from server.core.settings import MonitorSettings
    from server.monitor.discovery import Root
    from server.monitor.state import CLAUDE_CODE, CODEX
    from server.runtime.session_monitor import SessionMonitor

    empty = tempfile.mkdtemp()
    idle_monitor = SessionMonitor(MonitorSettings(), roots=[Root(CLAUDE_CODE, empty)])
    idle_monitor.poll()
    gc.collect()
    idle = rss_mb()
    base = Path(folder)
    roots = [
        Root(CLAUDE_CODE, str(base / "claude" / "projects")),
        Root(CODEX, str(base / "codex" / "sessions")),
    ]
    monitor = SessionMonitor(MonitorSettings(), roots=roots)
    start = time.perf_counter()
    monitor.poll()
    first = time.perf_counter() - start
    polls = []
    for _ in range(20):
        start = time.perf_counter()
        monitor.poll()
        polls.append(time.perf_counter() - start)
    live = len(monitor.snapshot())
    gc.collect()
    print(
        json.dumps(
            {
                "idle_mb": idle,
                "watching_mb": rss_mb(),
                "live": live,
                "first_poll_ms": first * 1e3,
                "poll_ms": statistics.median(polls) * 1e3,
            }
        )
    )


def measure_memory() -> dict[str, float]:
    folder = tempfile.mkdtemp(prefix="sparrow-bench-sessions-")
    try:
        write_sessions(Path(folder), FILES)
        done = subprocess.run(
            [sys.executable, "-m", "bench.bench_monitor", "--memory-child", folder],
            capture_output=True,
            text=True,
            cwd=HERE.parent,
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        figures: dict[str, float] = json.loads(done.stdout)
        return figures
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- main -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_monitor")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-ccusage", action="store_true")
    parser.add_argument("--memory-child", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv if argv is not None else [])
    if args.memory_child:
        memory_child(args.memory_child)
        return

    folder = Path(tempfile.mkdtemp(prefix="sparrow-bench-monitor-"))
    try:
        config = folder / "claude"
        transcript = config / "projects" / "-home-ada-src-engine" / f"{SESSION}.jsonl"
        write_transcript(transcript, SIZE, 121_000)
        size_mb = transcript.stat().st_size / MB
        print(f"(a) the current context of one {size_mb:.0f} MB Claude Code transcript")
        cold, cold_tokens, cold_read = ours_cold(transcript, args.runs)
        print(
            f"  ours, cold: {cold_tokens:,} tokens in {cold * 1e3:.2f} ms, "
            f"reading {cold_read / 1024:.0f} KB of the file (median of {args.runs})"
        )
        script = None if args.no_ccusage else ccusage_script()
        anchors: dict[str, tuple[float, int | None]] = {}
        if script is not None:
            anchors["ccusage session --id"] = ccusage_session(script, config)
            anchors["ccusage statusline"] = ccusage_statusline(script, config, transcript)
            for name, (seconds, tokens) in anchors.items():
                same = "same figure" if tokens == cold_tokens else f"DIFFERENT: {tokens}"
                print(f"  {name}, cold: {tokens} tokens in {seconds:.2f} s ({same})")
            for name, (seconds, _) in anchors.items():
                speedup = seconds / cold
                print(
                    row(
                        f"cold: x faster than {name}",
                        f"{speedup:,.0f}x",
                        f">= {COLD_GOAL:.0f}x",
                        COLD_GOAL / speedup,
                    )
                )

        append, append_tokens, _ = ours_append(transcript, args.runs)
        print(
            f"  ours, after an append: {append_tokens:,} tokens in {append * 1e6:.0f} µs "
            f"(median of {args.runs} appends)"
        )
        if script is not None:
            after = {
                "ccusage session --id": ccusage_session(script, config),
                "ccusage statusline": ccusage_statusline(script, config, transcript),
            }
            for name, (seconds, tokens) in after.items():
                same = "same figure" if tokens == append_tokens else f"DIFFERENT: {tokens}"
                print(f"  {name}, after the appends: {tokens} tokens in {seconds:.2f} s ({same})")
            for name, (seconds, _) in after.items():
                speedup = seconds / append
                print(
                    row(
                        f"append: x faster than {name}",
                        f"{speedup:,.0f}x",
                        f">= {APPEND_GOAL:.0f}x",
                        APPEND_GOAL / speedup,
                    )
                )

        print()
        print(
            f"(c) the whole `sparrow hook claude-code` process on the {size_mb:.0f} MB transcript"
        )
        median, best, out = hook_process(transcript, args.runs)
        said = "answered" if "additionalContext" in out else "said nothing"
        floor = startup_floor(args.runs)
        print(
            f"  {said}; median of {args.runs} runs, best {best * 1e3:.0f} ms; for scale: "
            f"`python -c pass` {floor['python'] * 1e3:.0f} ms, "
            f"`sparrow --version` {floor['sparrow'] * 1e3:.0f} ms"
        )
        print(
            row(
                "hook process time",
                f"{median * 1e3:.0f} ms",
                f"< {HOOK_GOAL_MS:.0f} ms",
                median * 1e3 / HOOK_GOAL_MS,
            )
        )
        if script is not None:
            seconds = anchors["ccusage statusline"][0]
            print(
                f"  (a process against a process: ccusage statusline took {seconds:.2f} s, "
                f"{seconds / median:,.0f}x the hook)"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print()
    print(f"(b) resident memory watching {FILES:,} session files")
    figures = measure_memory()
    above = figures["watching_mb"] - figures["idle_mb"]
    print(
        f"  idle {figures['idle_mb']:.1f} MB, watching {int(figures['live'])} live sessions "
        f"{figures['watching_mb']:.1f} MB; first poll (every file's tail read) "
        f"{figures['first_poll_ms']:.0f} ms, then {figures['poll_ms']:.1f} ms a poll"
    )
    print(
        row(
            "RSS above idle",
            f"{above:.1f} MB",
            f"< {MEMORY_GOAL_MB:.0f} MB",
            above / MEMORY_GOAL_MB,
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
