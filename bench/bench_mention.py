"""``@`` completion on a 100,000-file workspace, through the real server.

The workspace is generated once (deterministic names, as a source tree is:
many folders, a few files in each, plus a .gitignored build folder and a
node_modules that the index must leave out) and cached under
``~/.cache/sparrow-bench/``. Against a real ``sparrow-desktop --headless``:

- warm: seconds from the first ``GET /api/workspace/paths`` until it answers
  ``"ready": true`` (the index built in the background);
- first-suggestion latency: each query is one HTTP request (keep-alive) for
  the first 20 suggestions of a prefix of a real file's name (1 to 6
  letters), a folder path, or a fuzzy subsequence; p50 and p99 over all.

Goal: p99 under 100 ms once the index is warm.

    python -m bench.bench_mention [--queries N] [--files N]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import time
from pathlib import Path
from urllib.parse import urlencode

from bench.common import headless_server, percentile, row

GOAL_MS = 100.0
CHECKOUT = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".cache" / "sparrow-bench"
SYLLABLES = ["ma", "in", "ro", "ute", "ser", "ver", "con", "fig", "da", "ta", "lo", "ad", "er"]
SYLLABLES += ["pa", "th", "ix", "ken", "to", "mod", "el", "vi", "ew", "ca", "che", "hand", "le"]
EXTENSIONS = [".py", ".ts", ".md", ".json", ".c", ".h", ".rs", ".go"]


def _word(rnd: random.Random) -> str:
    return "".join(rnd.choice(SYLLABLES) for _ in range(rnd.randint(2, 4)))


def generate(root: Path, files: int, seed: int = 11) -> list[str]:
    """About ``files`` indexed files (8 per folder, folders 1-4 deep), once; their paths."""
    listing = root.with_suffix(".paths")
    if listing.exists() and (root / ".complete").exists():
        return listing.read_text().splitlines()
    rnd = random.Random(seed)
    made: list[str] = []
    folders: list[str] = []
    while len(made) < files:
        depth = rnd.randint(1, 4)
        base = rnd.choice(folders) if folders and depth > 1 else ""
        folder = f"{base}/{_word(rnd)}" if base else _word(rnd)
        folders.append(folder)
        (root / folder).mkdir(parents=True, exist_ok=True)
        for _ in range(8):
            path = f"{folder}/{_word(rnd)}{rnd.choice(EXTENSIONS)}"
            (root / path).touch()
            made.append(path)
    # What the index must leave out: ignored and dependency folders, 5,000 files each.
    for left_out in ("build", "node_modules"):
        for index in range(5000):
            path = root / left_out / f"d{index // 100}" / f"main{index}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
    (root / ".gitignore").write_text("build/\n*.tmp\n")
    listing.write_text("\n".join(made))
    (root / ".complete").touch()
    return made


def queries(paths: list[str], count: int, seed: int = 5) -> list[str]:
    rnd = random.Random(seed)
    asked = []
    for number in range(count):
        path = rnd.choice(paths)
        name = path.rsplit("/", 1)[-1]
        kind = number % 4
        if kind == 0:
            asked.append(name[: rnd.randint(1, 3)])
        elif kind == 1:
            asked.append(name[: rnd.randint(4, 6)])
        elif kind == 2:
            asked.append(path.split("/")[0] + "/" + path.split("/")[1][:2])
        elif number % 8 == 3:
            # Letters of the name, in order: a fuzzy query that finds it.
            picked = sorted(rnd.sample(range(len(name)), min(4, len(name))))
            asked.append("".join(name[i] for i in picked))
        else:
            asked.append("".join(rnd.sample(name, min(4, len(name)))))  # shuffled: few or none
    return asked


class Client:
    def __init__(self, port: int, token: str, workspace: Path) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"Authorization": f"Bearer {token}"}
        self.workspace = str(workspace)

    def ask(self, q: str, limit: int = 20) -> dict[str, object]:
        params = urlencode({"workspace": self.workspace, "q": q, "limit": limit})
        self.conn.request("GET", f"/api/workspace/paths?{params}", headers=self.headers)
        answer = self.conn.getresponse()
        body = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"{answer.status}: {body!r}")
        result = json.loads(body)
        assert isinstance(result, dict)
        return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_mention")
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--files", type=int, default=100_000)
    args = parser.parse_args([] if argv is None else argv)
    root = CACHE / f"mention-{args.files}"
    started = time.perf_counter()
    paths = generate(root, args.files)
    made = time.perf_counter() - started
    print(f"@ completion: {len(paths):,} files in {root} (ready in {made:.1f} s)")
    # This checkout's server, whichever checkout the venv's editable install names.
    with headless_server({"PYTHONPATH": str(CHECKOUT)}) as served:
        client = Client(served.port, served.token, root)
        started = time.perf_counter()
        while not client.ask("")["ready"]:
            time.sleep(0.05)
        warm = time.perf_counter() - started
        latencies, empty = [], 0
        for q in queries(paths, args.queries):
            began = time.perf_counter()
            found = client.ask(q)["paths"]
            latencies.append((time.perf_counter() - began) * 1000)
            empty += not found
        leaked = client.ask("node_modules/", 200)["paths"] + client.ask("build/", 200)["paths"]
    p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
    print(row("index warm (first query to ready)", f"{warm:.2f} s", "report", None))
    print(row("first suggestions p50", f"{p50:.1f} ms", f"< {GOAL_MS:g} ms", p50 / GOAL_MS))
    print(row("first suggestions p99", f"{p99:.1f} ms", f"< {GOAL_MS:g} ms", p99 / GOAL_MS))
    print(f"  {len(latencies)} queries, {empty} with no match; max {max(latencies):.1f} ms")
    leaks = [p for p in leaked if str(p).startswith(("build/", "node_modules/"))]
    print(f"  ignored paths suggested: {len(leaks)} (must be 0)")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
