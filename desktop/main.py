"""``sparrow-desktop``: the Sparrow window, or with ``--headless`` just its server."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from desktop.output import complain, say
from server.core.paths import resolve_paths
from server.core.redaction import install_log_redaction
from server.core.settings import SettingsError, load_settings
from server.web.serve import EmbeddedServer, PortInUseError, ServerStartError

if TYPE_CHECKING:
    from desktop.single_instance import Primary

SERVING_LINE = "Sparrow is serving at {url}"
HANDED_OVER_LINE = "Sparrow is already open: its window was brought to the front"
CUT_LINE = (
    "Sparrow quit before a safe point: it cut {runs}; the next start shows {them} as interrupted"
)
STOP_SECONDS = 10.0
# Quit has waited its bound already: a run it cut may hold the server (a
# checkpoint is never cut short), and the window is gone. The process ends
# soon, rather than holding the one-window lock while nothing shows.
STOP_AFTER_CUT_SECONDS = 1.0


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (the metadata scan costs startup time)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("sparrow")
        except PackageNotFoundError:
            number = "unknown"
        print(f"sparrow-desktop {number}")
        parser.exit()


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is between 0 and 65535, not {port}")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sparrow-desktop",
        description="Open the Sparrow window, served by an embedded server on 127.0.0.1.",
    )
    parser.add_argument(
        "--headless",
        action="store_true",
        help="serve without a window and print the URL to open in a browser",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=None,
        help="port on 127.0.0.1 to serve on (default: the setting server.port; "
        "0 there means a free one, chosen at launch)",
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument(
        "folder",
        nargs="?",
        default=None,
        help="a folder to open as the workspace of a new conversation; when Sparrow's "
        "window is already open, it comes to the front and opens the folder",
    )
    return parser


def serve_until_signalled(server: EmbeddedServer) -> int:
    """Headless: serve until SIGINT or SIGTERM (0), or until the server dies (1)."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        say(SERVING_LINE.format(url=server.launch_url))
        while not stop.wait(0.5):
            if not server.running:
                complain("Sparrow: the server stopped unexpectedly")
                return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def run_window(
    server: EmbeddedServer, *, folder: str | None = None, primary: Primary | None = None
) -> tuple[int, tuple[str, ...]]:
    """Show the window (it starts the server); 0 once it is closed, 1 if the server
    failed; and the runs Quit cut before a safe point."""
    from desktop.window import DesktopWindow, screenshot_path

    window = DesktopWindow(
        server, screenshot=screenshot_path(), state=resolve_paths().state, folder=folder
    )
    if primary is not None:
        primary.on_request(window.handle_request)
    code = window.run()
    return code, window.background.cut


class _Exit(Exception):
    """Stop the launch with this exit code (what to say has been said)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _folder(text: str | None) -> str | None:
    """The folder argument as an absolute path; _Exit(2) with the reason if unusable."""
    if text is None:
        return None
    path = Path(text).expanduser().absolute()
    if not path.is_dir():
        what = "is not a folder" if path.exists() else "does not exist"
        complain(f"Sparrow cannot open {path}: it {what}")
        raise _Exit(2)
    return str(path)


def _first_instance(folder: str | None) -> Primary | None:
    """Become the one window of this user (a Primary), or hand ``folder`` to it and
    stop the launch (_Exit). None when there is no single-instance here."""
    from desktop import single_instance

    if not single_instance.supported():
        return None
    try:
        address = single_instance.address_for(
            resolve_paths().state, single_instance.runtime_folder()
        )
        primary = single_instance.claim(address)
    except OSError as exc:
        complain(f"Sparrow: cannot tell whether another window is open ({exc}); opening one")
        return None
    if primary is not None:
        return primary
    if single_instance.hand_over(address, single_instance.Request(folder)):
        say(HANDED_OVER_LINE + (f" (to open {folder})" if folder else ""))
        raise _Exit(0)
    complain(
        "Sparrow: another Sparrow window holds the lock but did not answer; "
        "close it (or end its process) and launch again"
    )
    raise _Exit(1)


def _configured_port() -> int:
    return load_settings(resolve_paths().config_file).server.port


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    install_log_redaction()  # no log line, here or in a library, carries a key
    if args.headless and args.folder is not None:
        parser.error("a folder opens in the window: --headless takes none")
    primary: Primary | None = None
    try:
        folder = _folder(args.folder)
        if not args.headless:
            from desktop.display import NO_DISPLAY, missing_display

            reason = missing_display()
            if reason is not None:
                complain(NO_DISPLAY.format(reason=reason))
                return 2
            primary = _first_instance(folder)
            # Before pywebview or Qt is imported: they read these at import.
            from desktop.qt_env import configure_backend

            configure_backend()
        code = _serve(args, folder, primary)
    except _Exit as stop:
        return stop.code
    finally:
        if primary is not None:
            primary.close()
    if not args.headless:
        from desktop.leaving import leave_past_stuck_threads

        leave_past_stuck_threads(code)
    return code


def _serve(args: argparse.Namespace, folder: str | None, primary: Primary | None) -> int:
    try:
        port = args.port if args.port is not None else _configured_port()
    except SettingsError as exc:
        complain(f"Sparrow cannot start: {exc}")
        return 1
    server = EmbeddedServer(port=port)
    try:
        server.bind()
        if args.headless:
            server.start()
    except PortInUseError as exc:
        complain(str(exc))
        return 2
    except ServerStartError as exc:
        complain(str(exc))
        return 1
    code = 1
    cut: tuple[str, ...] = ()
    try:
        if args.headless:
            code = serve_until_signalled(server)
        else:
            code, cut = run_window(server, folder=folder, primary=primary)
    finally:
        try:
            server.stop(STOP_AFTER_CUT_SECONDS if cut else STOP_SECONDS)
        except TimeoutError as exc:
            if cut:
                them = "it" if len(cut) == 1 else "them"
                complain(CUT_LINE.format(runs=", ".join(cut), them=them))
            else:
                complain(f"Sparrow: {exc}")
            code = 1
    return code


if __name__ == "__main__":
    sys.exit(main())
