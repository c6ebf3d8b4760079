from pathlib import Path

from server.core.events import RunFinished, TextDelta, ToolRequested
from server.engine.transcript import BadLine, TranscriptRecorder, read_transcript


def test_every_event_but_a_delta_reaches_the_disk_at_once(tmp_path: Path) -> None:
    path = tmp_path / "t" / "r.jsonl"
    recorder = TranscriptRecorder(path)
    try:
        recorder(TextDelta(run_id="r", seq=1, turn=1, text="a\nb"))
        recorder(
            ToolRequested(
                run_id="r", seq=2, turn=1, call_id="c", tool="write_file", args={}, risk="Mutating"
            )
        )
        # Not closed yet: before the tool changes the workspace, another reader sees both lines.
        assert path.read_text().count("\n") == 2
        recorder(RunFinished(run_id="r", seq=3, status="completed", reason="done"))
    finally:
        recorder.close()
    events = list(read_transcript(path))
    assert [e.seq for e in events] == [1, 2, 3]  # type: ignore[union-attr]


def test_malformed_lines_are_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    good = TextDelta(run_id="r", seq=1, turn=1, text="ok")
    recorder = TranscriptRecorder(path)
    recorder(good)
    recorder.close()
    with path.open("a") as handle:
        handle.write('{"type": "text_delta", "run_id": "r", "seq": 2\n')  # cut by a crash
        handle.write("\n")
        handle.write('{"type": "mystery", "run_id": "r"}\n')
        handle.write("\xff\xfe garbage\n")
    items = list(read_transcript(path))
    assert items[0] == good
    bad = [i for i in items if isinstance(i, BadLine)]
    assert [b.number for b in bad] == [2, 4, 5]
    assert "not valid JSON" in bad[0].problem and "unknown event type" in bad[1].problem
