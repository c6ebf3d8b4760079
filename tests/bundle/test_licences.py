"""The licence check (packaging/licences.py) on real metadata files: it passes what
allows any licence of ours and fails GPL-only components, PyQt and the unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bundle.tools import load_packaging_module

licences = load_packaging_module("licences")


@pytest.mark.parametrize(
    "licence",
    [
        "MIT",
        "BSD-3-Clause",
        "Apache-2.0 OR BSD-2-Clause",
        "MIT AND PSF-2.0",
        "MPL-2.0",
        "LGPL-3.0-only OR GPL-2.0-only OR GPL-3.0-only",  # PySide6, shiboken6
        "GPLv2 with linking exception",  # pygit2 (libgit2)
        "GPLv2-or-later with a special exception which allows to use PyInstaller",
        "Apache Software License OR GNU General Public License v2 (GPLv2)",
        "BSD 3-Clause License",
        "MIT License",
        "Apache 2.0",
    ],
)
def test_licences_that_allow_any_licence_of_ours_pass(licence: str) -> None:
    verdict = licences.judge("component", licence)
    assert verdict.allowed, verdict


@pytest.mark.parametrize(
    "licence",
    [
        "GPL-3.0-only",
        "GPL-2.0-or-later",
        "GPLv3",
        "AGPL-3.0-or-later",
        "GPL-3.0-only OR AGPL-3.0-only",
        "MIT AND GPL-3.0-only",  # both apply: the GPL part binds
        "GNU General Public License v3 (GPLv3)",
    ],
)
def test_gpl_only_components_fail(licence: str) -> None:
    verdict = licences.judge("component", licence)
    assert not verdict.allowed and "GPL" in verdict.reason, verdict


def test_an_unknown_or_missing_licence_fails_unless_reviewed() -> None:
    assert not licences.judge("mystery", "").allowed
    assert not licences.judge("mystery", "Proprietary").allowed
    assert licences.judge("peewee", "").allowed  # REVIEWED, with the reason


def _dist_info(root: Path, name: str, *headers: str) -> None:
    folder = root / f"{name}-1.0.dist-info"
    folder.mkdir(parents=True)
    lines = ["Metadata-Version: 2.4", f"Name: {name}", "Version: 1.0", *headers]
    (folder / "METADATA").write_text("\n".join(lines) + "\n\nThe description.\n")


def test_the_check_walks_a_bundles_metadata_and_fails_on_gpl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _dist_info(tmp_path, "fine", "License-Expression: MIT")
    _dist_info(tmp_path, "qtish", "License: LGPL-3.0-only OR GPL-3.0-only")
    _dist_info(tmp_path, "classified", "Classifier: License :: OSI Approved :: BSD License")
    assert licences.main([str(tmp_path)]) == 0

    _dist_info(
        tmp_path,
        "copyleft",
        "Classifier: License :: OSI Approved :: GNU General Public License v3 (GPLv3)",
    )
    assert licences.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "copyleft: GPL with no permissive or LGPL alternative" in out
    assert "4 distributions checked, 1 not allowed" in out


def test_the_check_fails_on_pyqt_even_without_its_metadata(tmp_path: Path) -> None:
    _dist_info(tmp_path, "fine", "License-Expression: MIT")
    (tmp_path / "PyQt6" / "Qt6").mkdir(parents=True)
    assert licences.main([str(tmp_path)]) == 1


def test_the_check_refuses_a_folder_with_nothing_to_check(tmp_path: Path) -> None:
    assert licences.main([str(tmp_path)]) == 1
    assert licences.main([str(tmp_path / "missing")]) == 2


def test_the_check_fails_on_a_gpl_only_system_library(tmp_path: Path) -> None:
    _dist_info(tmp_path, "fine", "License-Expression: MIT")
    (tmp_path / "libreadline.so.8").write_bytes(b"\x7fELF")
    assert licences.main([str(tmp_path)]) == 1
    (tmp_path / "libreadline.so.8").unlink()
    (tmp_path / "libtinfo.so.6").write_bytes(b"\x7fELF")  # ncurses: MIT-style
    assert licences.main([str(tmp_path)]) == 0
