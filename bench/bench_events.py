"""(c) The event path: 10,000 text deltas from the engine to a WebSocket client.

A real headless server process plays a scripted turn of 10,000 words (one text
delta each); this process is the WebSocket client. For each delta the latency
is the time from its publication (its ``ts`` in the transcript) to the arrival
of the message that carried it (deltas may arrive merged). Goals: at least
10,000 deltas per second, p99 latency under 50 ms. Ratio = figure / goal,
inverted for throughput, so <= 1.0 meets the goal.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from websockets.sync.client import ClientConnection, connect

from bench.common import Served, headless_server, percentile, row

DELTAS = 10_000


def _post_run(served: Served, workspace: Path) -> dict[str, object]:
    script = {"turns": [{"text": "w " * DELTAS}]}
    body = json.dumps(
        {"workspace": str(workspace), "task": "bench", "model": "script", "script": script}
    )
    request = urllib.request.Request(
        f"{served.base}/api/runs",
        data=body.encode(),
        method="POST",
        headers={"authorization": f"Bearer {served.token}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        run: dict[str, object] = json.load(response)["run"]
        return run


def _receive(ws: ClientConnection, arrivals: list[tuple[int, float]]) -> None:
    while True:
        event = json.loads(ws.recv())
        arrivals.append((event["seq"], time.time()))
        if event["type"] == "run_finished":
            return


def measure() -> dict[str, float]:
    with headless_server() as served, tempfile.TemporaryDirectory() as workspace:
        arrivals: list[tuple[int, float]] = []  # (last seq carried, arrival time)
        uri = f"ws://127.0.0.1:{served.port}/ws?token={served.token}"
        with connect(uri, origin=f"http://127.0.0.1:{served.port}", max_size=None) as ws:  # type: ignore[arg-type]
            ws.send(json.dumps({"op": "subscribe", "run_id": "*"}))
            time.sleep(0.2)  # let the subscription land before the run starts (setup, not measured)
            # Receive on its own thread from now on: the POST below must not delay arrivals.
            receiver = threading.Thread(target=_receive, args=(ws, arrivals))
            receiver.start()
            run = _post_run(served, Path(workspace))
            receiver.join(timeout=120)
        published = {}
        for line in Path(str(run["transcript"])).read_text().splitlines():
            event = json.loads(line)
            if event["type"] == "text_delta":
                published[event["seq"]] = event["ts"]
    latencies = []
    previous = 0
    for seq, arrived in arrivals:
        latencies += [
            arrived - published[s] for s in range(previous + 1, seq + 1) if s in published
        ]
        previous = seq
    first, last = min(published.values()), max(t for _, t in arrivals)
    return {
        "deltas": float(len(latencies)),
        "messages": float(len(arrivals)),
        "per_second": len(published) / (last - first),
        "p50_ms": percentile(latencies, 50) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
    }


def main() -> None:
    figures = measure()
    print("(c) event path: 10,000 text deltas, engine -> WebSocket client (real server process)")
    print(f"  {int(figures['deltas'])} deltas delivered in {int(figures['messages'])} messages")
    print(
        row(
            "deltas per second",
            f"{figures['per_second']:,.0f}",
            ">= 10,000",
            10_000 / figures["per_second"],
        )
    )
    print(row("p50 latency", f"{figures['p50_ms']:.1f} ms", "-", None))
    print(row("p99 latency", f"{figures['p99_ms']:.1f} ms", "< 50 ms", figures["p99_ms"] / 50))


if __name__ == "__main__":
    main()
