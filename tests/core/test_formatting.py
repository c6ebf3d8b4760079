"""One rule for tokens, sizes and ages: the CLI (server/core/formatting.py)
and the window (ui/js/format.js) say every figure the same way."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from server.core import formatting
from tests.conftest import require

UI = Path(__file__).resolve().parents[2] / "ui" / "js" / "format.js"
TOKENS = [0, 7, 999, 1000, 1049, 1050, 12_345, 99_949, 99_950, 99_999, 100_000, 141_499,
          141_500, 141_600, 999_499, 999_500, 1_000_000, 1_005_000, 1_234_567, 12_500_000]
SIZES = [0, 1023, 1024, 1536, 10_240, 1024**2 - 1, 1024**2, 5 * 1024**2 + 52_429,
         1024**3 - 1, 1024**3, 3 * 1024**3]
NOW = 1_800_000_000.0
AGES = [0, 44, 45, 59, 60, 119, 3599, 3600, 7199, 86_399, 86_400, 2 * 86_400 + 86_399,
        6 * 86_400 + 86_399, 7 * 86_400, 40 * 86_400]


def test_the_figures_the_issue_saw_disagree_no_more() -> None:
    assert formatting.tokens(141_600) == "142k"
    assert formatting.age(NOW - (2 * 86_400 + 20 * 3600), NOW) == "2 d ago"
    assert formatting.size(1536) == "1.5 KB"


def test_python_and_javascript_say_every_figure_alike() -> None:
    node = shutil.which("node")
    require("node (to run the UI's format.js)", node is not None)
    assert node is not None
    script = f"""
      import {{ formatTokens, formatBytes, relativeTime }} from {json.dumps(UI.as_uri())};
      const out = {{
        tokens: {json.dumps(TOKENS)}.map(formatTokens),
        sizes: {json.dumps(SIZES)}.map(formatBytes),
        ages: {json.dumps(AGES)}.map((d) => relativeTime({NOW} - d, {NOW})),
      }};
      console.log(JSON.stringify(out));
    """
    # The same environment (its TZ too): a date past a week is the local one.
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True,
                          text=True, check=True, env=dict(os.environ))
    said = json.loads(done.stdout)
    assert said["tokens"] == [formatting.tokens(n) for n in TOKENS]
    assert said["sizes"] == [formatting.size(n) for n in SIZES]
    assert said["ages"] == [formatting.age(NOW - d, NOW) for d in AGES]
