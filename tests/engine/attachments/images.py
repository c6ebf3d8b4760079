"""Small real images for the tests, written with Pillow (no fixtures on disk)."""

from __future__ import annotations

import io


def image_bytes(kind: str = "PNG", size: tuple[int, int] = (8, 6)) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, (200, 40, 90)).save(out, format=kind)
    return out.getvalue()
