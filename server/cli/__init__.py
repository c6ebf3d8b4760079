"""``sparrow``: the command line. Each subcommand lives in its own module and is
imported only when used, so that quick commands stay quick."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from server.cli.parser import build_parser
from server.core.redaction import install_log_redaction


def main(argv: Sequence[str] | None = None) -> int:
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
