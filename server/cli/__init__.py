"""``sparrow``: the command line. Each subcommand lives in its own module and is
imported only when used, so that quick commands stay quick."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from server.cli.parser import build_parser
from server.core.redaction import install_log_redaction

# A reader that leaves early (`sparrow checkpoints --json | head -1`) got what it
# wanted: success, as argparse already answers for --help and --version, and no
# failed pipeline under `set -o pipefail`.
CLOSED_PIPE = 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            return _dispatch(argv)
        finally:
            # The buffered tail meets a closed pipe here, where it can be caught,
            # rather than in the interpreter's last flush, which prints a traceback.
            sys.stdout.flush()
    except BrokenPipeError:
        return _reader_left()
    except BaseExceptionGroup as group:
        # A renderer inside a task group (`sparrow run`) raises it wrapped.
        _, rest = group.split(BrokenPipeError)
        if rest is not None:
            raise
        return _reader_left()


def _reader_left() -> int:
    """Nobody reads stdout any more: end quietly. Python's final flush of the
    still-buffered output would raise again, so stdout now goes to devnull."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return CLOSED_PIPE


def _dispatch(argv: Sequence[str] | None) -> int:
    install_log_redaction()  # no log line, here or in a library, carries a key
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    handler = args.handler
    try:
        code: int = handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code


def run() -> None:
    """The console script's entry point."""
    sys.exit(main())
