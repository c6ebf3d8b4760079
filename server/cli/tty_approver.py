"""Who answers approvals for ``sparrow run``: the person at the terminal, or,
when there is none, nobody (denied, or allowed once with ``--yes``).

The terminal is read without blocking the event loop: the approver waits for
stdin to become readable (cancellable, so the approval timeout and Ctrl-C end
the wait) and only then reads what is there, keeping any typed-ahead lines."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

import anyio

from server.engine.approvals import ApprovalAnswer, ApprovalQuestion, Unattended
from server.engine.permissions.rules import Scope

SURFACE = "cli"
ARGS_SHOWN = 200
SCOPES = {"": Scope.WORKSPACE, "w": Scope.WORKSPACE, "g": Scope.GLOBAL, "s": Scope.SESSION}


def short_args(args: dict[str, Any]) -> str:
    """The call's arguments on one line, long values cut."""
    parts = []
    for key, value in args.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = text.replace("\n", "⏎")
        parts.append(f"{key}={text[:60] + '…' if len(text) > 60 else text}")
    line = "  ".join(parts)
    return line[:ARGS_SHOWN] + "…" if len(line) > ARGS_SHOWN else line


class TerminalInput:
    """Lines from a file descriptor, read only once it is readable."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._eof = False

    async def readline(self) -> str | None:
        """The next line without its newline; None at the end of input."""
        while b"\n" not in self._buffer and not self._eof:
            await _wait_readable(self.fd)
            chunk = os.read(self.fd, 4096)
            self._eof = not chunk
            self._buffer += chunk
        if not self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", "replace").strip()


async def _wait_readable(fd: int) -> None:
    try:
        await anyio.wait_readable(fd)
    except NotImplementedError:  # an event loop that cannot watch a plain fd (Windows)
        await anyio.to_thread.run_sync(_select_readable, fd, abandon_on_cancel=True)


def _select_readable(fd: int) -> None:
    import select

    select.select([fd], [], [])


class TtyApprover:
    """Asks at the terminal: the call, why it asks, and what "always" would save."""

    def __init__(self, stdin: TerminalInput, out: TextIO = sys.stderr) -> None:
        self.stdin = stdin
        self.out = out
        # Calls of one batch may ask together: one question at a time on the terminal.
        self._lock = anyio.Lock()

    def _say(self, text: str, end: str = "\n") -> None:
        self.out.write(text + end)
        self.out.flush()

    async def _prompt(self, text: str) -> str | None:
        self._say(text, end="")
        return await self.stdin.readline()

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        async with self._lock:
            try:
                return await self._ask(question)
            except anyio.get_cancelled_exc_class():
                # The approval timed out or the run was stopped: end the prompt's line.
                self._say("\n  (no answer: the question was withdrawn)")
                raise

    async def _ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        self._say(f"\n? {question.tool} [{question.risk}]  {short_args(question.args)}")
        self._say(f"  {question.reason}")
        self._say(f"  allow always would save: {question.suggested_rule}")
        while True:
            answer = await self._prompt("  [o]nce / [a]lways / [n]o: ")
            if answer is None:  # end of input: nobody is left to ask
                return ApprovalAnswer("deny", message="no answer (end of input)", by=SURFACE)
            choice = answer.lower()[:1]
            if choice == "o":
                return ApprovalAnswer("allow_once", by=SURFACE)
            if choice == "a":
                return await self._always()
            if choice == "n":
                message = await self._prompt("  a message for the agent (optional): ")
                return ApprovalAnswer("deny", message=message or "", by=SURFACE)
            self._say("  answer o, a or n")

    async def _always(self) -> ApprovalAnswer:
        while True:
            answer = await self._prompt(
                "  save it for this [w]orkspace (default), [g]lobal, or this [s]ession: "
            )
            scope = SCOPES.get((answer or "").lower()[:1])
            if scope is not None:
                return ApprovalAnswer("allow_always", scope=scope, by=SURFACE)
            self._say("  answer w, g or s")


class NotInteractive:
    """Unattended, remembering what it denied: the hint is printed once the run
    has ended, not in the middle of the model's streamed text."""

    def __init__(self) -> None:
        self._inner = Unattended()
        self.denied: list[str] = []

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        answer = await self._inner.ask(question)
        if not answer.allows:
            self.denied.append(question.tool)
        return answer

    def hint(self) -> str | None:
        if not self.denied:
            return None
        tools = ", ".join(dict.fromkeys(self.denied))
        return (
            f"sparrow: {tools} would ask; not interactive, so it was denied "
            "(add --yes to allow such calls)"
        )


def choose_approver(*, yes: bool) -> TtyApprover | Unattended | NotInteractive:
    """The terminal when a person is at it, else what --yes says."""
    if yes:
        return Unattended(yes=True, by=SURFACE)
    if sys.stdin.isatty() and sys.stderr.isatty():
        return TtyApprover(TerminalInput(sys.stdin.fileno()))
    return NotInteractive()
