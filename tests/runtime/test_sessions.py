"""Sessions from real runs (scripted model, real SQLite, real transcripts and
checkpoints): replay equals what was seen live, search lands on the turn of a
tool's output, deletion takes only what is the session's own, and the age
limit spares a running session."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from server.core.events import Event, StreamDelta, ToolResult
from server.core.paths import Paths
from server.core.settings import SessionSettings, Settings
from server.engine.bus import EventBus
from server.engine.checkpoints import CheckpointStore
from server.engine.store import RunInfo, Store
from server.engine.store.session_index import Gathered, write
from server.engine.transcript import BadLine, read_transcript
from server.providers.base import Usage
from server.providers.scripted import ScriptedProvider, ScriptedToolCall, ScriptedTurn
from server.runtime.runs import RunManager, RunRequest
from server.runtime.sessions import (
    SessionRunning,
    apply_retention,
    delete_session,
    resume_request,
)

pytestmark = pytest.mark.anyio


def _model(*turns: ScriptedTurn) -> ScriptedProvider:
    return ScriptedProvider(list(turns))


async def _run(runs: RunManager, request: RunRequest) -> RunInfo:
    info = runs.start(request)
    with anyio.fail_after(120):
        done = await runs.wait(info.id)
    assert done is not None and done.status == "completed", done
    return done


def _replayed(info: RunInfo) -> list[Event]:
    items = list(read_transcript(Path(info.transcript)))
    assert not [i for i in items if isinstance(i, BadLine)]
    return [i for i in items if not isinstance(i, BadLine)]


async def test_replay_equals_what_was_seen_live_over_two_follow_ups(
    paths: Paths, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("one line\n")
    bus = EventBus()
    live: list[Event] = []
    # A sink on the bus sees every event as published (a queued subscriber may
    # get consecutive deltas merged: the same text, fewer events).
    bus.add_sink(live.append)
    # And a queued subscriber, as the window's socket and the CLI read the bus.
    queued = bus.subscribe(limit=100_000)
    async with RunManager(paths=paths, store=Store(paths.database), bus=bus) as runs:
        first = await _run(runs, RunRequest(str(workspace), "Read notes.txt", provider=_model(
            ScriptedTurn("Reading.", (ScriptedToolCall("read_file", {"path": "notes.txt"}),)),
            ScriptedTurn("It holds one line.", usage=Usage(input_tokens=10, output_tokens=5)),
        )))
        second = await _run(runs, RunRequest("", "And now?", continue_from=first.id,
                                             provider=_model(ScriptedTurn("Still one line."))))
        third = await _run(runs, RunRequest("", "Thanks", continue_from=second.id,
                                            provider=_model(ScriptedTurn("You're welcome."))))
    assert len({first.session_id, second.session_id, third.session_id}) == 1
    replayed = [e for info in (first, second, third) for e in _replayed(info)]
    assert len(replayed) > 20
    assert [e.to_dict() for e in replayed] == [e.to_dict() for e in live]
    assert {e.run_id for e in live} == {first.id, second.id, third.id}
    seen = await queued.receive()
    queued.close()
    assert _merged(seen) == _merged(replayed)
    assert [e.to_dict() for e in seen if not isinstance(e, StreamDelta)] == [
        e.to_dict() for e in replayed if not isinstance(e, StreamDelta)
    ]


def _merged(events: list[Event]) -> list[tuple[str, str]]:
    """The events with consecutive deltas of a stream as one text (how a queue merges them)."""
    out: list[tuple[str, str]] = []
    for event in events:
        if isinstance(event, StreamDelta) and out and out[-1][0] == repr(event.merge_key()):
            out[-1] = (out[-1][0], out[-1][1] + event.text)
        elif isinstance(event, StreamDelta):
            out.append((repr(event.merge_key()), event.text))
        else:
            out.append((event.type, str(event.seq)))
    return out


async def test_search_finds_a_word_only_a_tool_output_held_in_an_old_session(
    paths: Paths, workspace: Path
) -> None:
    (workspace / "zoo.txt").write_text("the quokka sleeps\n")
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus()) as runs:
        old = await _run(runs, RunRequest(str(workspace), "What animal is there?", provider=_model(
            ScriptedTurn("Let me see.", (ScriptedToolCall("read_file", {"path": "zoo.txt"}),)),
            ScriptedTurn("A marsupial."),
        )))
        await _run(runs, RunRequest(str(workspace), "Say hi to the heliotrope",
                                    provider=_model(ScriptedTurn("Hi."))))
    hits = store.search_sessions("quokka")
    assert [(h.session_id, h.run_id, h.kind) for h in hits] == [
        (old.session_id, old.id, "tool_output")
    ]
    result = next(e for e in _replayed(old) if isinstance(e, ToolResult))
    assert (hits[0].seq, hits[0].turn) == (result.seq, result.turn) == (result.seq, 1)
    assert {"text": "quokka", "match": True} in hits[0].snippet
    titled = store.search_sessions("heliotrope")
    assert [h.kind for h in titled][:1] == ["title"] and titled[0].title.endswith("heliotrope")
    assert store.search_sessions("marsup")[0].kind == "assistant"  # the word being typed
    for odd in ['foo"bar', "AND", "OR NOT", '"', "*", "(", "quokka)", "a:b", "^x", "NEAR(a b)",
                "-", "''", "\\", "\x02", "   ", "", "zoo.txt", "quokka AND"]:
        store.search_sessions(odd)  # never raises
    assert store.search_sessions("quokka AND") == []  # AND is a word here, found nowhere
    store.close()


async def _with_checkpoint(runs: RunManager, workspace: str, name: str) -> RunInfo:
    return await _run(runs, RunRequest(workspace, f"write {name}", provider=_model(
        ScriptedTurn("Writing.", (ScriptedToolCall("write_file", {"path": name, "content": "x"}),)),
        ScriptedTurn("Done."),
    )))


async def test_delete_takes_the_session_and_only_its_own_checkpoints(
    paths: Paths, workspace: Path
) -> None:
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus()) as runs:
        gone = await _with_checkpoint(runs, str(workspace), "a.txt")
        follow = await _run(runs, RunRequest("", "and b", continue_from=gone.id, provider=_model(
            ScriptedTurn("Writing.", (ScriptedToolCall("write_file", {"path": "b.txt"}),)),
            ScriptedTurn("Done."),
        )))
        kept = await _with_checkpoint(runs, str(workspace), "c.txt")
    checkpoints = CheckpointStore(paths, Settings().checkpoints, store)
    own = [c.id for c in checkpoints.list(run_id=gone.id)] + [
        c.id for c in checkpoints.list(run_id=follow.id)
    ]
    others = [c.id for c in checkpoints.list(run_id=kept.id)]
    assert len(own) >= 2 and others
    # The other session names one of this session's checkpoints too: it stays.
    shared = own[-1]
    write(store.db, kept.session_id, kept.id, Gathered(checkpoints=[shared]))
    assert store.search_sessions("write")  # both titles are indexed

    assert delete_session(paths, store, gone.session_id) == len(own) - 1
    assert not Path(gone.transcript).exists() and not Path(follow.transcript).exists()
    assert store.get_run(gone.id) is None and store.get_run(follow.id) is None
    assert store.session_info(gone.session_id) is None
    left = store.db.execute_sql(
        "SELECT COUNT(*) FROM session_text WHERE session_id = ?", (gone.session_id,)
    ).fetchone()[0]
    assert left == 0
    assert {h.session_id for h in store.search_sessions("write")} == {kept.session_id}
    assert [c for c in own if checkpoints.get(c) is not None] == [shared]
    assert all(checkpoints.get(c) is not None for c in others)
    assert Path(kept.transcript).exists() and store.session_info(kept.session_id) is not None
    store.close()


async def test_the_age_limit_deletes_old_finished_sessions_and_keeps_running_ones(
    paths: Paths, workspace: Path
) -> None:
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus()) as runs:
        old = await _run(runs, RunRequest(str(workspace), "old", provider=_model(
            ScriptedTurn("ok"))))
        recent = await _run(runs, RunRequest(str(workspace), "recent", provider=_model(
            ScriptedTurn("ok"))))
    # A run of this process still going, in a session as old as the first.
    going = store.create_session(str(workspace), "going")
    running = store.create_run(run_id="r-going", session_id=going, workspace=str(workspace),
                               task="going", model="scripted",
                               transcript=paths.transcript("r-going"))
    ten_days_ago = time.time() - 10 * 86_400
    for session in (old.session_id, going):
        store.db.execute_sql(
            "UPDATE sessions SET last_active = ? WHERE id = ?", (ten_days_ago, session)
        )
    keep = Settings(sessions=SessionSettings(keep_days=3))
    assert apply_retention(paths, store, Settings()) == 0  # 0: keep every session
    assert apply_retention(paths, store, keep) == 1
    assert store.session_info(old.session_id) is None
    assert not Path(old.transcript).exists()
    assert store.session_info(recent.session_id) is not None
    assert store.session_info(going) is not None and store.get_run(running.id) is not None
    with pytest.raises(SessionRunning):
        delete_session(paths, store, going)
    assert os.getpid() == store.db.execute_sql(
        "SELECT pid FROM runs WHERE id = 'r-going'"
    ).fetchone()[0]
    store.close()


async def test_resume_continues_the_session_or_starts_from_its_handoff_doc(
    paths: Paths, workspace: Path
) -> None:
    store = Store(paths.database)
    async with RunManager(paths=paths, store=store, bus=EventBus()) as runs:
        first = await _run(runs, RunRequest(str(workspace), "Plan the garden", provider=_model(
            ScriptedTurn("Tulips first."))))
        request = resume_request(store, first.session_id, "and then?")
        assert request.continue_from == first.id and request.parent is None
        request.provider = _model(ScriptedTurn("Roses."))
        same = await _run(runs, request)
        assert same.session_id == first.session_id
        for n in range(3):  # a middle to summarise: more than the first and last six messages
            same = await _run(runs, RunRequest("", f"more {n}", continue_from=same.id,
                                               provider=_model(ScriptedTurn(f"Noted {n}."))))
        compacted = await _run(runs, RunRequest("", "/compact", continue_from=same.id,
                                                provider=_model()))
        handoff = store.session_handoff(first.session_id)
        assert handoff and Path(handoff).is_file(), compacted
        request = resume_request(store, first.session_id, "what was decided?")
        assert request.handoff == handoff and request.parent == first.session_id
        request.provider = _model(ScriptedTurn("Tulips, then roses."))
        child = await _run(runs, request)
    info = store.session_info(child.session_id)
    assert info is not None and info.parent == first.session_id
    assert child.session_id != first.session_id
    store.close()
