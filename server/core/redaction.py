"""Keys never leave the process: every event, transcript line, log line and
error message passes ``redact``, which blanks the known shapes of API keys
and every secret registered here (each key Sparrow reads registers itself).

Streamed text is held back at its end until a space, so that a key split
across two deltas is seen whole (``StreamRedactor``)."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any, Final

MARK: Final = "[redacted]"
# Shorter values are not keys: blanking them would blank ordinary words.
MIN_SECRET: Final = 8

_SHAPES: Final = re.compile(
    "|".join(
        (
            r"sk-ant-[A-Za-z0-9_\-]{16,}",  # Anthropic
            r"sk-(?:or-v1-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",  # OpenAI, OpenRouter
            r"AIza[0-9A-Za-z_\-]{30,}",  # Google
            r"gsk_[A-Za-z0-9]{20,}",  # Groq
            r"gh[pousr]_[A-Za-z0-9]{30,}",
            r"github_pat_[A-Za-z0-9_]{30,}",
            r"AKIA[0-9A-Z]{16}",  # AWS access key id
            r"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack
        )
    )
)
# A value after a name that says it is a secret: the name stays, the value goes.
_NAMED: Final = re.compile(
    r"(?i)((?:authorization|proxy-authorization)\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+"
    r"|(?:x-api-key|api[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token)"
    r"[\"']?\s*[:=]\s*[\"']?)"
    r"([^\s\"',;]{8,})"
)

_lock = threading.Lock()
_secrets: set[str] = set()
_known: re.Pattern[str] | None = None


def register_secret(value: str | None) -> None:
    """Blank ``value`` wherever it appears from now on."""
    global _known
    if not value or len(value) < MIN_SECRET:
        return
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        ordered = sorted(_secrets, key=len, reverse=True)
        _known = re.compile("|".join(re.escape(s) for s in ordered))


def redact(text: str) -> str:
    if len(text) < MIN_SECRET:
        return text  # no key is this short (a stream is never cut inside one: see below)
    known = _known
    if known is not None:
        text = known.sub(MARK, text)
    text = _SHAPES.sub(MARK, text)
    if not _may_name_secret(text):
        return text
    return _NAMED.sub(lambda m: m.group(1) + MARK, text)


def _may_name_secret(text: str) -> bool:
    """Whether ``text`` may hold a name of _NAMED: it holds one of the words every
    such name holds. _NAMED ignores case, which leaves the regex engine no first
    letter to look for: it tries the whole pattern at every character (~75 ns a
    character, for every piece of a fast stream). In ASCII text (a name that
    matches only through Unicode case folding, such as "\u017fecret_key" with a
    long s, is not) no such word means no match."""
    if not text.isascii():
        return True
    lowered = text.lower()
    return "auth" in lowered or "api" in lowered or "secret" in lowered or "access" in lowered


def holds_key(text: str) -> bool:
    """Whether ``text`` holds what ``redact`` would blank: a registered secret, a
    key of a known shape, or a value after a name that says it is a secret."""
    known = _known
    if known is not None and known.search(text):
        return True
    return bool(_SHAPES.search(text) or (_may_name_secret(text) and _NAMED.search(text)))


def redact_value(value: Any) -> Any:
    """``value`` with every string in it redacted (dicts and lists are copied)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


class StreamRedactor:
    """Redacts text that arrives in pieces: what follows the last whitespace of
    what came so far may be the start of a key, so it waits for the next piece
    (or for ``flush``). A key never holds whitespace, so it is never split."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        cut = max(text.rfind(" "), text.rfind("\n"), text.rfind("\t"))
        self._held = text[cut + 1 :]
        return redact(text[: cut + 1]) if cut >= 0 else ""

    def flush(self) -> str:
        text, self._held = self._held, ""
        return redact(text)

    @property
    def holding(self) -> bool:
        return bool(self._held)


class RedactingFilter(logging.Filter):
    """Redacts every record's message before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if record.exc_info:
            # The traceback's text is made later, by the handler: make it now, cleaned.
            formatted = logging.Formatter().formatException(record.exc_info)
            cleaned += "\n" + redact(formatted)
            record.exc_info = None
            record.exc_text = None
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        return True


def install_log_redaction() -> None:
    """Every handler of the root logger, and the last-resort one that writes to
    stderr when none is set, redacts what it writes."""
    root = logging.getLogger()
    handlers = [*root.handlers, logging.lastResort]
    for handler in handlers:
        if handler is None:
            continue
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
