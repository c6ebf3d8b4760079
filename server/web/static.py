"""Where the web UI's files are: beside the source in a checkout, inside the
package in a wheel, inside the bundle when frozen by PyInstaller."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def ui_dir() -> Path:
    override = os.environ.get("SPARROW_UI_DIR")
    candidates = [Path(override)] if override else []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.append(Path(bundle) / "ui")
    here = Path(__file__).resolve().parent
    candidates += [here / "_ui", here.parents[1] / "ui"]
    for candidate in candidates:
        if (candidate / "index.html").is_file():
            return candidate
    raise FileNotFoundError(
        "the web UI files were not found (looked in: " + ", ".join(str(c) for c in candidates) + ")"
    )
