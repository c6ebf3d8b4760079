"""Render the app icon's renditions from the one SVG, assets/sparrow.svg.

    QT_QPA_PLATFORM=offscreen python packaging/render_icons.py [OUT_DIR]

Writes sparrow-{16..512}.png, sparrow.ico (Windows) and sparrow.icns (macOS)
into assets/icons/ (or OUT_DIR), and assets/sparrow.png (256 px: the window's
icon). The renditions are committed, so that `make install-desktop` and builds
on macOS and Windows need neither Qt nor Pillow; tests/bundle/test_icons.py
renders them again and fails when they no longer match the SVG.

QSvgRenderer (PySide6, already a dependency) draws the SVG without a display;
Pillow (a test dependency, well kept) writes the .ico and .icns containers.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "assets" / "sparrow.svg"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)  # 256 is the largest an .ico holds
ICNS_SIZES = (16, 32, 64, 128, 256, 512)
WINDOW_ICON_SIZE = 256


def render_png(size: int, svg: Path = SVG) -> bytes:
    """The SVG drawn at size x size, antialiased, on a transparent background."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not an SVG Qt can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


def render_all(out: Path, svg: Path = SVG) -> dict[str, Path]:
    """Every rendition under ``out``; their paths by name."""
    from PIL import Image

    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    images: dict[int, Image.Image] = {}
    for size in SIZES:
        png = render_png(size, svg)
        path = out / f"sparrow-{size}.png"
        path.write_bytes(png)
        written[path.name] = path
        images[size] = Image.open(io.BytesIO(png)).convert("RGBA")
    # Each size drawn from the SVG, not scaled down from the largest: small icons stay sharp.
    ico = out / "sparrow.ico"
    images[ICO_SIZES[-1]].save(
        ico,
        format="ICO",
        sizes=[(s, s) for s in ICO_SIZES],
        append_images=[images[s] for s in ICO_SIZES[:-1]],
    )
    written[ico.name] = ico
    icns = out / "sparrow.icns"
    images[ICNS_SIZES[-1]].save(
        icns, format="ICNS", append_images=[images[s] for s in ICNS_SIZES[:-1]]
    )
    written[icns.name] = icns
    return written


def main(argv: list[str]) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    out = Path(argv[0]) if argv else ROOT / "assets" / "icons"
    written = render_all(out)
    window_icon = ROOT / "assets" / "sparrow.png"
    if not argv:
        window_icon.write_bytes(written[f"sparrow-{WINDOW_ICON_SIZE}.png"].read_bytes())
    for path in written.values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
