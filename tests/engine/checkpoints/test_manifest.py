import os
from pathlib import Path

from server.engine.checkpoints import manifest as m

STAT = (0o100644, 1, 2, 3, 4)


def _entry(n: int) -> m.Entry:
    return (STAT, bytes([n]) * 20, 0o100644, n)


def _fresh(path: Path) -> m.Manifest:
    """Load as another process would: nothing cached."""
    m.forget(path)
    return m.load(path)


def test_missing_or_broken_manifests_load_empty(tmp_path: Path) -> None:
    path = tmp_path / "manifest"
    assert m.load(path) == m.Manifest()
    path.write_bytes(b"not marshal data")
    assert _fresh(path) == m.Manifest()


def test_changes_are_journaled_and_replayed(tmp_path: Path) -> None:
    path = tmp_path / "manifest"
    base = m.Manifest(tree=b"t" * 20, entries={"a": _entry(1), "b": _entry(2)}, total=3)
    m.save(path, base)
    loaded = m.load(path)
    assert loaded is base  # cached
    step = m.Manifest(
        tree=b"u" * 20,
        entries={"a": _entry(1), "c": _entry(3)},
        total=4,
        dirs={"x"},
        head=("cp-1", b"u" * 20),
    )
    m.save(path, step, base=base, changed=["b", "c"])
    journal = path.with_name("manifest.journal")
    assert journal.stat().st_size < path.stat().st_size
    assert _fresh(path) == step


def test_a_torn_record_keeps_what_came_before(tmp_path: Path) -> None:
    path = tmp_path / "manifest"
    base = m.Manifest(tree=b"t" * 20, entries={"a": _entry(1)}, total=1)
    m.save(path, base)
    step = m.Manifest(tree=b"u" * 20, entries={"a": _entry(1), "b": _entry(2)}, total=3)
    m.save(path, step, base=base, changed=["b"])
    journal = path.with_name("manifest.journal")
    with journal.open("ab") as handle:
        handle.write(b"{\x00\x01")  # a record cut short by a crash
    loaded = _fresh(path)
    assert loaded == step
    # The next save cannot append after the torn record: it writes a whole base.
    later = m.Manifest(tree=b"v" * 20, entries={"b": _entry(2)}, total=2)
    m.save(path, later, base=loaded, changed=["a"])
    assert not journal.exists() and _fresh(path) == later


def test_a_journal_from_an_older_base_is_void(tmp_path: Path) -> None:
    path = tmp_path / "manifest"
    base = m.Manifest(tree=b"t" * 20, entries={"a": _entry(1)}, total=1)
    m.save(path, base)
    step = m.Manifest(tree=b"u" * 20, entries={}, total=0)
    m.save(path, step, base=base, changed=["a"])
    stale = path.with_name("manifest.journal").read_bytes()
    m.save(path, base)  # a whole base (a new generation) replaces both
    path.with_name("manifest.journal").write_bytes(stale)  # as if a crash left it behind
    assert _fresh(path) == base


def test_a_long_journal_is_folded_into_the_base(tmp_path: Path) -> None:
    path = tmp_path / "manifest"
    current = m.Manifest(tree=b"t" * 20, entries={"a": _entry(1)}, total=1)
    m.save(path, current)
    journal = path.with_name("manifest.journal")
    sizes = []
    for _ in range(700):
        following = m.Manifest(
            tree=b"t" * 20,
            entries={"a": _entry(1)},
            total=1,
            skipped={f"big{i}": "larger than the per-file cap" for i in range(20)},
        )
        m.save(path, following, base=current, changed=["a"])
        current = following
        sizes.append(journal.stat().st_size if journal.exists() else 0)
    assert 0 in sizes[1:] and max(sizes) < 300_000
    assert _fresh(path) == current
    assert os.path.exists(path)
