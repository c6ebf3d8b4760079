"""The app follows runs of other processes live: their events come on its bus
as they reach the transcript (only complete lines), the same ones, once each,
and the following ends with the run, however the run ends."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from server.core.paths import Paths
from server.engine.bus import EventBus, Subscription
from server.engine.store import Store
from server.engine.transcript import BadLine, read_transcript
from server.runtime.follower import CANCEL_REASON, RunFollower
from server.runtime.runs import RunManager
from tests.cli.test_cli import SPARROW
from tests.runtime.foreign import Foreign

pytestmark = pytest.mark.anyio


def line(kind: str, seq: int, **fields: object) -> str:
    return json.dumps({"type": kind, "run_id": "r-far", "seq": seq, "ts": 1.0, **fields}) + "\n"


STARTED = line(
    "run_started", 1, task="a task elsewhere", workspace="/w", model="script", session_id="s"
)
TEXT = line("text_delta", 2, turn=1, text="hello from the terminal")
FINISHED = line("run_finished", 3, status="completed", reason="done", turns=1)


@pytest.fixture
async def manager(paths: Paths) -> AsyncIterator[RunManager]:
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus()) as runs:
        yield runs
    store.close()


async def received(subscription: Subscription) -> list[dict[str, object]]:
    """What the bus has for ``subscription`` now (nothing waits)."""
    events: list[dict[str, object]] = []
    with anyio.move_on_after(0.01):
        while True:
            events += [e.to_dict() for e in await subscription.receive()]
    return events


async def test_a_run_elsewhere_streams_its_complete_lines_once_each(manager: RunManager) -> None:
    follower = RunFollower(manager)
    subscription = manager.bus.subscribe()
    far = Foreign("r-far")
    try:
        far.write(STARTED)
        follower.poll()
        assert follower.following == ["r-far"]
        assert [e["type"] for e in await received(subscription)] == ["run_started"]
        info = manager.get("r-far")
        assert info is not None
        where = manager.elsewhere(info)
        assert where is not None and (where.pid, where.surface) == (far.process.pid, "cli")
        assert where.can_cancel and "answered at that terminal" in where.note

        half = len(TEXT) // 2
        far.write(TEXT[:half])
        follower.poll()
        assert await received(subscription) == []  # half a line is not an event
        far.write(TEXT[half:])
        follower.poll()
        assert [e["text"] for e in await received(subscription)] == ["hello from the terminal"]
        # A client that connects now gets this history, then what comes next.
        assert [e.seq for e in manager.events("r-far") or []] == [1, 2]

        far.write(FINISHED)
        follower.poll()
        assert [e["type"] for e in await received(subscription)] == ["run_finished"]
        assert follower.following == []
        far.finish()
        follower.poll()
        assert await received(subscription) == []  # nothing twice
        assert manager.elsewhere(manager.get("r-far")) is None  # type: ignore[arg-type]
    finally:
        far.close()


async def test_a_run_elsewhere_whose_process_dies_ends_interrupted_live(
    manager: RunManager,
) -> None:
    follower = RunFollower(manager, alive_every=0)
    subscription = manager.bus.subscribe()
    far = Foreign("r-far")
    try:
        far.write(STARTED + TEXT[:20])  # dies mid-line
        follower.poll()
        far.die()
        follower.poll()
    finally:
        far.close()
    events = await received(subscription)
    assert [(e["type"], e["seq"]) for e in events] == [("run_started", 1), ("run_finished", 2)]
    assert events[-1]["status"] == "interrupted"
    info = manager.get("r-far")
    assert info is not None and info.status == "interrupted"
    transcript = list(read_transcript(Path(info.transcript)))
    assert not any(isinstance(e, BadLine) for e in transcript) and len(transcript) == 2
    assert follower.following == []


async def test_a_run_elsewhere_seen_first_by_a_client_is_not_sent_twice(
    manager: RunManager,
) -> None:
    follower = RunFollower(manager)
    far = Foreign("r-far")
    try:
        far.write(STARTED + TEXT)
        # The window opens the run before the follower's next look.
        history = manager.events("r-far")
        assert [e.seq for e in history or []] == [1, 2]
        subscription = manager.bus.subscribe({"r-far"})
        follower.poll()
        far.write(FINISHED)
        follower.poll()
        assert [e["seq"] for e in await received(subscription)] == [3]
    finally:
        far.close()


def cli_run(script: Path, workspace: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            SPARROW,
            "run",
            "--script",
            str(script),
            "-w",
            str(workspace),
            "--json",
            "a task elsewhere",
        ],
        stdout=subprocess.DEVNULL,
    )


async def test_a_cli_run_is_followed_event_for_event_and_cancelled_from_the_app(
    manager: RunManager, workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "text": "Writing a file.",
                        "tool_calls": [
                            {"tool": "write_file", "args": {"path": "a.txt", "content": "1"}}
                        ],
                    },
                    {
                        "text": "Now waiting.",
                        "tool_calls": [{"tool": "run_shell", "args": {"command": "sleep 60"}}],
                    },
                    {"text": "never said"},
                ]
            }
        )
    )
    follower = RunFollower(manager)
    subscription = manager.bus.subscribe()
    process = cli_run(script, workspace)
    seen: list[dict[str, object]] = []
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(follower.run)
            with anyio.fail_after(120):
                while not any(e.get("tool") == "run_shell" for e in seen):
                    seen += [e.to_dict() for e in await subscription.receive()]
                run_id = str(seen[0]["run_id"])
                assert manager.cancel(run_id)  # reaches the terminal's process
                while seen[-1]["type"] != "run_finished":
                    seen += [e.to_dict() for e in await subscription.receive()]
            tg.cancel_scope.cancel()
        assert process.wait(timeout=60) == 130
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()
    assert (seen[-1]["status"], seen[-1]["reason"]) == ("cancelled", CANCEL_REASON)
    info = manager.get(run_id)
    assert info is not None and info.status == "cancelled"
    on_disk = [e.to_dict() for e in read_transcript(Path(info.transcript))]  # type: ignore[union-attr]
    assert seen == on_disk or _merged(on_disk) == _merged(seen)


def _merged(events: list[dict[str, object]]) -> list[dict[str, object]]:
    """Consecutive deltas of one stream as one (a live reader may get them merged)."""
    out: list[dict[str, object]] = []
    for event in events:
        last = out[-1] if out else None
        if (
            last is not None
            and str(event["type"]).endswith("_delta")
            and last["type"] == event["type"]
            and last.get("turn") == event.get("turn")
            and last.get("call_id") == event.get("call_id")
        ):
            out[-1] = event | {"text": str(last["text"]) + str(event["text"])}
        else:
            out.append(dict(event))
    return out


async def test_following_reads_each_byte_once_not_the_whole_transcript_per_change(
    manager: RunManager,
) -> None:
    follower = RunFollower(manager)
    subscription = manager.bus.subscribe(limit=10_000)
    far = Foreign("r-far")
    try:
        far.write(STARTED)
        follower.poll()
        tail = follower._followed["r-far"].tail
        looks = 1
        for seq in range(2, 402):
            far.write(line("text_delta", seq, turn=1, text=f"word {seq} "))
            follower.poll()
            looks += 1
        written = Path(tail.path).stat().st_size
        # Each look reads what was appended, and the one byte before it (the check
        # that the file was not rewritten): never the transcript again.
        assert tail.bytes_read <= written + looks
        got = await received(subscription)  # the deltas merged: one text
        assert got[-1]["text"] == "".join(f"word {seq} " for seq in range(2, 402))
    finally:
        far.close()


async def test_a_run_elsewhere_over_between_two_looks_is_still_shown(manager: RunManager) -> None:
    follower = RunFollower(manager)
    subscription = manager.bus.subscribe()
    follower.poll()  # the app is up: from now on every run elsewhere shows
    far = Foreign("r-far")
    try:
        far.write(STARTED + TEXT + FINISHED)
        far.finish()
        follower.poll()
        assert [e["type"] for e in await received(subscription)] == [
            "run_started",
            "text_delta",
            "run_finished",
        ]
        assert follower.following == []
    finally:
        far.close()
