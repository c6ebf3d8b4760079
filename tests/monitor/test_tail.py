"""The tail cursor on real files: backward from the end, then appends only."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.monitor import tail as tail_module
from server.monitor.tail import GROWN, MISSING, RESET, SAME, Tail


def backward(t: Tail, stop_after: int | None = None) -> list[bytes]:
    seen: list[bytes] = []

    def visit(raw: bytes) -> bool:
        seen.append(raw)
        return stop_after is not None and len(seen) >= stop_after

    assert t.scan_backward(visit)
    return seen


def forward(t: Tail) -> list[bytes]:
    seen: list[bytes] = []
    assert t.scan_forward(seen.append)
    return seen


def test_backward_gives_lines_newest_first_and_stops_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n")
    t = Tail(str(path))
    assert t.check() == RESET
    assert backward(t) == [b"three", b"two", b"one"]
    assert t.offset == path.stat().st_size and t.check() == SAME
    t2 = Tail(str(path))
    assert backward(t2, stop_after=1) == [b"three"]
    assert t2.offset == path.stat().st_size  # the cursor is at the end whatever was visited


def test_a_partial_last_line_waits_until_it_is_complete(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    t = Tail(str(path))
    assert backward(t) == [b'{"a":1}']
    assert t.offset == 8
    with path.open("ab") as handle:
        handle.write(b"2")
    assert t.check() == GROWN and forward(t) == []
    with path.open("ab") as handle:
        handle.write(b'}\n{"c":3}\n{"d"')
    assert t.check() == GROWN
    assert forward(t) == [b'{"b":2}', b'{"c":3}']


def test_a_file_without_any_newline_yet(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"half":')
    t = Tail(str(path))
    assert backward(t) == [] and t.offset == 0
    with path.open("ab") as handle:
        handle.write(b"1}\n")
    assert forward(t) == [b'{"half":1}']


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    t = Tail(str(empty))
    assert backward(t) == [] and t.offset == 0 and t.check() == SAME
    missing = Tail(str(tmp_path / "nope.jsonl"))
    assert missing.check() == MISSING
    assert not missing.scan_backward(lambda raw: True)
    assert not missing.scan_forward(lambda raw: None)


def test_lines_longer_than_a_block_are_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    big = b"x" * (tail_module.BLOCK * 3 + 17)
    path.write_bytes(b"first\n" + big + b"\nlast\n")
    assert backward(Tail(str(path))) == [b"last", big, b"first"]


def test_appends_are_read_once_each(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"")
    t = Tail(str(path))
    backward(t)
    seen = []
    for n in range(300):  # rapid appends, a read after each
        with path.open("ab") as handle:
            handle.write(f"line {n}\n".encode())
        assert t.check() == GROWN
        seen += forward(t)
    assert seen == [f"line {n}".encode() for n in range(300)]
    assert t.check() == SAME


def test_a_long_line_written_slowly_is_not_read_again_and_again(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"start\n")
    t = Tail(str(path))
    backward(t)
    piece = b"y" * 10_000
    for _ in range(100):
        with path.open("ab") as handle:
            handle.write(piece)
        assert forward(t) == []
    with path.open("ab") as handle:
        handle.write(b"\n")
    before = t.bytes_read
    assert forward(t) == [piece * 100]
    # Each byte is read about twice (searched, then taken), never once per poll.
    assert t.bytes_read - before <= 2 * len(piece) * 100 + 10
    assert t.bytes_read < 3 * len(piece) * 100


def test_a_shrunk_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n")
    t = Tail(str(path))
    backward(t)
    path.write_bytes(b"new\n")  # truncated and rewritten in place: same inode, smaller
    assert t.check() == RESET
    assert backward(t) == [b"new"]


def test_a_replaced_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"one\ntwo\n")
    t = Tail(str(path))
    backward(t)
    other = tmp_path / "b.jsonl"
    other.write_bytes(b"alpha\nbeta\ngamma\n")  # longer, but another file
    os.replace(other, path)
    assert t.check() == RESET
    assert not t.scan_forward(lambda raw: None)


def test_a_file_rewritten_longer_in_place_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"one\ntwo\n")
    t = Tail(str(path))
    backward(t)
    with path.open("r+b") as handle:  # same inode, longer, the cursor now mid-line
        handle.write(b"a much longer first line\n")
    assert t.check() == GROWN
    assert not t.scan_forward(lambda raw: None)  # the caller reads it anew


def test_the_backward_scan_has_a_limit(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"".join(b"line %d\n" % n for n in range(10_000)))
    t = Tail(str(path))
    seen: list[bytes] = []
    t.scan_backward(lambda raw: bool(seen.append(raw)), max_bytes=1000)
    assert 0 < len(seen) < 200 and t.bytes_read <= 1000
    assert seen[0] == b"line 9999"


def test_a_huge_file_is_read_from_its_tail_only(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        handle.truncate(450 * 1024 * 1024)  # 450 MB, sparse: costs no disk
        handle.seek(0, os.SEEK_END)
        handle.write(b"\nwanted\nlast\n")
    t = Tail(str(path))
    assert backward(t, stop_after=2) == [b"last", b"wanted"]
    assert t.bytes_read <= tail_module.BLOCK
    with path.open("ab") as handle:
        handle.write(b"appended\n")
    before = t.bytes_read
    assert forward(t) == [b"appended"]
    assert t.bytes_read - before == len(b"appended\n") + 1  # + the byte before the cursor
    path.unlink()


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.binary(min_size=1, max_size=40).map(lambda b: b.replace(b"\n", b"_")), max_size=30
    ),
    cuts=st.lists(st.integers(min_value=1, max_value=50), max_size=40),
    block=st.integers(min_value=1, max_value=64),
    start_at=st.integers(min_value=0, max_value=1000),
)
def test_any_split_of_appends_reads_every_line_once(
    lines: list[bytes], cuts: list[int], block: int, start_at: int
) -> None:
    data = b"".join(x + b"\n" for x in lines)
    start = min(start_at, len(data))
    original = tail_module.BLOCK
    tail_module.BLOCK = block  # tiny blocks: lines cross block boundaries everywhere
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "t.jsonl"
            path.write_bytes(data[:start])
            t = Tail(str(path))
            older: list[bytes] = []
            t.scan_backward(lambda raw: bool(older.append(raw)))
            got = list(reversed(older))
            position = start
            for cut in [*cuts, len(data)]:
                end = min(len(data), position + cut)
                with path.open("ab") as handle:
                    handle.write(data[position:end])
                position = end
                if t.check() == GROWN:
                    assert t.scan_forward(got.append)
                if position == len(data):
                    break
            if t.check() == GROWN:
                t.scan_forward(got.append)
    finally:
        tail_module.BLOCK = original
    assert got == lines


@pytest.mark.parametrize("block", [1, 2, 5, 4096])
def test_backward_with_any_block_size(
    tmp_path: Path, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tail_module, "BLOCK", block)
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"a\nbb\n\nccc\ndddd\npartial")
    assert backward(Tail(str(path))) == [b"dddd", b"ccc", b"bb", b"a"]
