"""Sessions at scale: a generated history of 10,000 sessions and 1,000,000
events (``session_history``), and what a user waits for in it: a search, the
sidebar's first page, opening a session; and the resident memory of the real
app serving that history against the same app with 10 sessions.

    python -m bench.bench_sessions [--sessions N] [--queries N]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import headless_server, median, percentile, row
from bench.session_history import EVENTS_PER_RUN, RUNS_PER_SESSION, cached_history, sample_words
from server.engine.store import Store
from server.engine.transcript import read_transcript

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"search_p50": 0.020, "search_p99": 0.100, "first_page": 0.050, "memory_mb": 20.0}


def queries(sessions: int, count: int) -> list[str]:
    """Varied searches: common and rare words, two words, prefixes being typed,
    odd input, and words found nowhere."""
    rng = random.Random(3)
    words = sample_words(sessions, count)
    chosen: list[str] = []
    for index in itertools.count():
        if len(chosen) >= count:
            break
        word = words[index % len(words)]
        kind = index % 5
        if kind == 0:
            chosen.append(word)
        elif kind == 1:
            chosen.append(f"{word} {rng.choice(words)}")
        elif kind == 2:
            chosen.append(word[: rng.randint(3, 5)])
        elif kind == 3:
            chosen.append(rng.choice([f'"{word}', f"{word} AND", f"({word}*", f"{word}:x"]))
        else:
            chosen.append(f"qx{word}zz")
    return chosen


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def measure_store(home: Path, sessions: int, count: int) -> dict[str, float]:
    store = Store(home / "state" / "sessions.db")
    try:
        searches = [timed(lambda q=q: store.search_sessions(q, 20)) for q in queries(sessions,
                                                                                     count)]
        cold_page = timed(lambda: store.sessions_page(limit=50))
        pages = [timed(lambda: store.sessions_page(limit=50)) for _ in range(20)]
        rng = random.Random(5)
        picks = [f"s-bench-{rng.randrange(sessions):06d}" for _ in range(50)]

        def open_one(session_id: str) -> None:
            info = store.session_info(session_id)
            assert info is not None
            runs = store.session_runs(session_id)
            events = list(itertools.islice(read_transcript(Path(runs[0].transcript)), 200))
            assert events

        opens = [timed(lambda s=s: open_one(s)) for s in picks]
    finally:
        store.close()
    return {
        "search_p50": percentile(searches, 50),
        "search_p99": percentile(searches, 99),
        "search_max": max(searches),
        "first_page": median(pages),
        "first_page_cold": cold_page,
        "open_session": median(opens),
    }


def _get(base: str, token: str, path: str, **params: Any) -> Any:
    query = ("?" + urllib.parse.urlencode(params)) if params else ""
    request = urllib.request.Request(base + path + query,
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def app_memory(home: Path, sessions: int) -> tuple[float, float]:
    """MB resident in the app's process after it served pages, searches and
    sessions; and the median time of its first page over HTTP."""
    empty = Path(tempfile.mkdtemp(prefix="sparrow-bench-agents-"))
    env = {
        "SPARROW_HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "CLAUDE_CONFIG_DIR": str(empty / "claude"),
        "CODEX_HOME": str(empty / "codex"),
    }
    with headless_server(env) as served:
        base, token = served.base, served.token
        for _ in range(50):  # the server answers once its lifespan ran
            try:
                _get(base, token, "/api/sessions", limit=1)
                break
            except OSError:
                time.sleep(0.2)
        pages = [timed(lambda: _get(base, token, "/api/sessions")) for _ in range(10)]
        body = _get(base, token, "/api/sessions")
        for _ in range(5):
            if not body["next"]:
                break
            body = _get(base, token, "/api/sessions", cursor=body["next"])
        for query in queries(sessions, 60):
            _get(base, token, "/api/sessions/search", q=query)
        for session in _get(base, token, "/api/sessions", limit=10)["sessions"]:
            _get(base, token, f"/api/sessions/{session['id']}")
            _get(base, token, f"/api/runs/{session['last_run']['id']}/events")
        time.sleep(0.5)
        return _rss_kb(served.process.pid) / 1024, median(pages)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_sessions")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    big = cached_history(args.sessions)
    small = cached_history(10)
    events = args.sessions * RUNS_PER_SESSION * EVENTS_PER_RUN
    size = (big / "state" / "sessions.db").stat().st_size / 1e6
    print(f"sessions: {args.sessions:,} sessions, {events:,} events "
          f"(database {size:.0f} MB; ready in {time.perf_counter() - started:.1f} s)")
    figures = measure_store(big, args.sessions, args.queries)
    big_mb, http_page = app_memory(big, args.sessions)
    small_mb, _ = app_memory(small, 10)
    growth = big_mb - small_mb
    ms = 1000.0
    print(row(f"search p50 ({args.queries} queries)", f"{figures['search_p50'] * ms:.1f} ms",
              "< 20 ms", figures["search_p50"] / GOALS["search_p50"]))
    print(row("search p99", f"{figures['search_p99'] * ms:.1f} ms", "< 100 ms",
              figures["search_p99"] / GOALS["search_p99"]))
    print(row("search slowest", f"{figures['search_max'] * ms:.1f} ms", "-", None))
    print(row("sidebar first page (50, warm median)", f"{figures['first_page'] * ms:.1f} ms",
              "< 50 ms", figures["first_page"] / GOALS["first_page"]))
    print(row("sidebar first page (first call)", f"{figures['first_page_cold'] * ms:.1f} ms",
              "< 50 ms", figures["first_page_cold"] / GOALS["first_page"]))
    print(row("first page over HTTP (GET /api/sessions)", f"{http_page * ms:.1f} ms", "< 50 ms",
              http_page / GOALS["first_page"]))
    print(row("open a session (+200 events)", f"{figures['open_session'] * ms:.1f} ms", "-",
              None))
    print(row("app RSS, 10 sessions", f"{small_mb:.1f} MB", "-", None))
    print(row(f"app RSS, {args.sessions:,} sessions", f"{big_mb:.1f} MB", "-", None))
    print(row("memory growth", f"{growth:.1f} MB", "< 20 MB", max(growth, 0.0) /
              GOALS["memory_mb"]))
    if os.environ.get("BENCH_JSON"):
        print(json.dumps(figures | {"rss_small_mb": small_mb, "rss_big_mb": big_mb,
                                    "http_first_page": http_page}))


if __name__ == "__main__":
    main()
