"""The committed icon renditions are what packaging/render_icons.py draws from the
one SVG today: a changed SVG without new renditions fails here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageChops

ROOT = Path(__file__).resolve().parents[2]
ICONS = ROOT / "assets" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh rendering, in its own process: Qt's application object stays out of pytest's."""
    out = tmp_path_factory.mktemp("icons")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "render_icons.py"), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


def _largest_difference(a: Path, b: Path) -> int:
    with Image.open(a) as first, Image.open(b) as second:
        assert first.size == second.size
        diff = ImageChops.difference(first.convert("RGBA"), second.convert("RGBA"))
    return max(high for _, high in diff.getextrema())


@pytest.mark.parametrize("size", SIZES)
def test_each_png_matches_the_svg(rendered: Path, size: int) -> None:
    committed = ICONS / f"sparrow-{size}.png"
    with Image.open(committed) as image:
        assert image.size == (size, size) and image.mode == "RGBA"
        # Transparent corners (the rounded square), an opaque middle.
        assert image.getpixel((0, 0))[3] == 0 and image.getpixel((size // 2, size // 2))[3] == 255
    # A little slack for antialiasing across Qt builds; a changed drawing differs by far more.
    assert _largest_difference(committed, rendered / committed.name) <= 8


def test_the_window_icon_is_the_256_rendition() -> None:
    assert (ROOT / "assets" / "sparrow.png").read_bytes() == (
        ICONS / "sparrow-256.png"
    ).read_bytes()


def test_the_ico_and_icns_hold_every_size() -> None:
    with Image.open(ICONS / "sparrow.ico") as ico:
        assert ico.format == "ICO"
        assert {16, 24, 32, 48, 64, 128, 256} <= {w for w, _ in ico.info["sizes"]}
    with Image.open(ICONS / "sparrow.icns") as icns:
        assert icns.format == "ICNS"
        assert {(16, 16, 2), (32, 32, 2), (128, 128, 1), (256, 256, 1), (512, 512, 1)} <= set(
            icns.info["sizes"]
        )
