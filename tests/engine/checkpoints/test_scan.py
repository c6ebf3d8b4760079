from pathlib import Path

import pygit2

from server.engine.checkpoints.manifest import Manifest
from server.engine.checkpoints.scan import Limits, Scan, format_size


def test_sizes_read_as_people_write_them() -> None:
    assert format_size(512) == "512 B"
    assert format_size(10 * 1024 * 1024) == "10.0 MB"
    assert format_size(2 * 1024**3) == "2.0 GB"


def test_a_scan_reuses_unchanged_entries_and_lists_candidates(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "d").mkdir(parents=True)
    (workspace / "d" / "same.txt").write_text("same")
    (workspace / "d" / "new.txt").write_text("new")
    repo = pygit2.init_repository(str(tmp_path / "s.git"), bare=True)
    repo.workdir = str(workspace)
    limits = Limits(max_file_bytes=100, max_total_bytes=1000)
    first = Scan(repo, str(workspace), Manifest(), limits, fresh=True)
    first.full()
    assert sorted(path for path, _ in first.candidates) == ["d/new.txt", "d/same.txt"]
    stat_of_same = (workspace / "d" / "same.txt").lstat()
    known = (
        (
            stat_of_same.st_mode,
            stat_of_same.st_size,
            stat_of_same.st_mtime_ns,
            stat_of_same.st_ctime_ns,
            stat_of_same.st_ino,
        ),
        b"\x01" * 20,
        0o100644,
        4,
    )
    old = Manifest(tree=b"\x02" * 20, entries={"d/same.txt": known}, total=4, dirs={"d"})
    second = Scan(repo, str(workspace), old, limits, fresh=False)
    second.full()
    assert second.entries == {"d/same.txt": known} and second.total == 4
    assert [path for path, _ in second.candidates] == ["d/new.txt"]
