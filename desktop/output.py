"""Lines for whoever launched us (tests and scripts read them), safe without a console."""

from __future__ import annotations

import sys

from server.core.redaction import redact


def say(line: str) -> None:
    # A windowed build on Windows has no stdout at all.
    if sys.stdout is not None:
        print(line, file=sys.stdout, flush=True)


def complain(line: str) -> None:
    if sys.stderr is not None:
        print(redact(line), file=sys.stderr, flush=True)
