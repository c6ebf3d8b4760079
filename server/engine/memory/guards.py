"""The guards every memory write passes, whoever writes (the CLI, the API, the
agent's ``memory`` tool): memory goes into every later run's system prompt, so
what it may hold is narrower than what a file may.

Four categories, each rejection naming its own: oversized, credential
exfiltration, invisible Unicode, prompt injection. The text is never echoed
back whole: a reason names what was found, not the secret around it."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property
from typing import Final

from server.core.redaction import holds_key

OVERSIZED: Final = "oversized"
CREDENTIALS: Final = "credential exfiltration"
INVISIBLE: Final = "invisible Unicode"
INJECTION: Final = "prompt injection"

FACT_KEY_LIMIT: Final = 100
FACT_VALUE_LIMIT: Final = 1_000


class MemoryWriteError(ValueError):
    """A memory write that cannot be made; the message says why."""


class MemoryRejected(MemoryWriteError):
    """A write the guards refused; ``str()`` is the reason, for the user or the model."""

    def __init__(self, category: str, detail: str) -> None:
        super().__init__(f"rejected ({category}): {detail}")
        self.category = category
        self.detail = detail


@dataclass(frozen=True)
class _Pattern:
    source: str
    what: str

    @cached_property
    def regex(self) -> re.Pattern[str]:
        # Compiled at the first memory write, not when the server starts
        # (thirty patterns, ~7 ms of every launch).
        return re.compile(self.source, re.IGNORECASE)


def _p(pattern: str, what: str) -> _Pattern:
    return _Pattern(pattern, what)


# Between two words of a phrase: any run of spaces, line breaks or the odd
# punctuation an attacker puts in to dodge an exact match ("ignore_all-previous").
_GAP: Final = r"[\s_\-.,:;*]+"


def _words(*words: str) -> str:
    return _GAP.join(words)


_SECRET_WORDS: Final = (
    r"(?:\b(?:api[\s_-]?keys?|access[\s_-]?keys?|secret[\s_-]?keys?|tokens?|secrets?|"
    r"passwords?|passphrases?|credentials?|private[\s_-]?keys?|ssh[\s_-]?keys?|cookies?|"
    r"env(?:ironment)?[\s_-]?var(?:iable)?s?)\b|\.env\b)"
)
_ENV_REF: Final = (
    r"(?:\$\{?[A-Za-z_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASS|CREDENTIALS?)[A-Za-z_]*\}?|"
    r"\$\(\s*(?:env|printenv|set|cat)\b|`\s*(?:env|printenv|cat)\b|"
    r"%[A-Z_]*(?:KEY|TOKEN|SECRET)[A-Z_]*%)"
)
# .env and its per-environment siblings; not .env.example and the like, which hold none.
_DOTENV: Final = r"(?<![\w.])\.env(?:\.local|\.production|\.prod)?(?![\w.-])"
# Hosts that exist to receive requests from anyone: where stolen data is sent.
_DROP_HOSTS: Final = (
    r"(?:webhook\.site|requestbin\.|pipedream\.net|hookbin\.com|ngrok(?:-free)?\.(?:io|app)|"
    r"burpcollaborator\.net|oastify\.com|interact\.sh|oast\.(?:fun|live|me|pro|site|online)|"
    r"canarytokens\.com|beeceptor\.com|requestcatcher\.com|postb\.in)"
)

_EXFILTRATION: Final = (
    _p(r"-----BEGIN [A-Z ]*PRIVATE KEY-----", "a private key block"),
    _p(r"\b(?:password|passwd|passphrase)\s*[:=]\s*\S{4,}", "a password"),
    _p(
        r"\b(?:curl|wget|httpie|invoke-webrequest|iwr|nc|ncat|netcat|scp|rsync)\b[^\n]{0,200}"
        + _ENV_REF,
        "a network command that sends environment secrets",
    ),
    _p(
        r"\b(?:curl|wget|scp|rsync|nc|netcat)\b[^\n]{0,200}(?:" + _DOTENV + r"|\.ssh\b|"
        r"id_rsa|id_ed25519|\.aws/credentials|\.netrc|\.npmrc|\.pypirc)",
        "a network command that uploads a secrets file",
    ),
    _p(
        r"\b(?:env|printenv|set|export\s+-p)\s*\|\s*(?:base64|xxd|curl|wget|nc|netcat|ssh)\b",
        "the environment piped out",
    ),
    _p(
        r"\bbase64\b[^\n]{0,80}(?:\benv\b|\bprintenv\b|" + _DOTENV + r"|\.ssh\b|id_rsa|"
        r"id_ed25519|\.netrc|" + _ENV_REF + ")",
        "base64 of the environment or a secrets file",
    ),
    _p(r"(?:~|\$HOME|\$\{HOME\}|/home/[^/\s]+|/root|/Users/[^/\s]+)/\.ssh\b", "~/.ssh"),
    _p(r"\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)", "an SSH private key file"),
    _p(
        r"(?:~|\$HOME)/\.(?:aws/credentials|netrc|npmrc|pypirc|docker/config\.json)",
        "a credentials file",
    ),
    _p(
        r"\b(?:cat|dump|send|post|upload|leak|exfiltrate|read out)\b[^\n]{0,40}" + _DOTENV,
        ".env contents",
    ),
    _p(r"\bcontents?\s+of\s+(?:the\s+|your\s+|my\s+)?(?:[\w./-]*/)?" + _DOTENV, ".env contents"),
    _p(
        r"\b(?:send|sends|sending|post|posting|upload|uploading|e-?mail|mail|forward|leak|"
        r"exfiltrate|transmit)\b[^\n]{0,40}?" + _SECRET_WORDS + r"[^\n]{0,60}?\b(?:to|into|via)\b",
        "an instruction to send secrets elsewhere",
    ),
    _p(r"https?://[^\s]*" + _ENV_REF, "a URL carrying an environment secret"),
    _p(r"https?://(?:[\w-]+\.)*" + _DROP_HOSTS, "a URL of a request-capture service"),
)

_INJECTION: Final = (
    _p(
        _words(
            r"\b(?:ignore|disregard|forget|override|bypass)",
            r"(?:(?:all|any|every|the|of|your|my|these|those)" + _GAP + r"){0,3}"
            r"(?:previous|prior|preceding|above|earlier|former|system|developer|initial|"
            r"original)",
            r"(?:instructions?|prompts?|rules|directions|directives|guidelines|messages|"
            r"guardrails|orders)\b",
        ),
        '"ignore previous instructions"',
    ),
    _p(
        _words(
            r"\b(?:ignore|disregard|forget)",
            r"(?:everything|all)",
            r"(?:above|before|previously|you were told)\b",
        ),
        '"ignore everything above"',
    ),
    _p(
        _words(
            r"\b(?:disregard|ignore|override|forget|reveal|print|leak|repeat)",
            r"(?:the|your|its)",
            r"system",
            r"(?:prompt|message|instructions?)\b",
        ),
        '"disregard the system prompt"',
    ),
    _p(_words(r"\byou", r"are", r"now\b"), '"you are now"'),
    _p(
        _words(r"\bnew", r"(?:system\s+)?(?:instructions?|prompt|rules|directives?)") + r"\s*:",
        '"new instructions:"',
    ),
    _p(
        _words(r"\b(?:updated|revised|real|actual)", r"(?:system\s+)?instructions?") + r"\s*:",
        '"updated instructions:"',
    ),
    _p(
        _words(
            r"\bfrom",
            r"now",
            r"on",
            r"(?:you|the assistant)",
            r"(?:are|will|must|shall)",
            r"(?:ignore|obey|only|act|pretend)\b",
        ),
        '"from now on you will ..."',
    ),
    _p(
        _words(
            r"\b(?:pretend|act)",
            r"(?:to be|as|as if you are|as if you were)",
            r"(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken|evil|dan\b|developer mode)",
        ),
        "a role-play jailbreak",
    ),
    _p(r"\b(?:jailbreak|jailbroken|dan\s+mode|developer\s+mode\s+(?:enabled|on))\b", "a jailbreak"),
    _p(
        _words(
            r"\b(?:do not|don't|never)",
            r"(?:tell|inform|notify|alert|mention\s+(?:this\s+|it\s+)?to)",
            r"the",
            r"user\b",
        ),
        '"do not tell the user"',
    ),
    _p(
        r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|start_header_id|"
        r"end_header_id|eot_id)\s*\|>",
        "a chat-template token",
    ),
    _p(r"\[/?INST\]|<</?SYS>>", "a chat-template marker"),
    _p(
        r"(?:^|\n)\s*#{1,6}\s*(?:system|assistant|developer)\s*(?:prompt\s*)?:",
        'a role marker ("### system:")',
    ),
    _p(r"</?\s*(?:system|system[_-]prompt|instructions|developer)\s*>", "a <system> tag"),
    _p(
        r"(?:^|\n)\s*\[?(?:system|developer)\]?\s*(?:message|prompt|override)\s*:",
        'a role marker ("system message:")',
    ),
)

# Zero-width and other invisible format characters, bidi controls, tag characters.
_INVISIBLE: Final = {
    0x00AD: "SOFT HYPHEN",
    0x034F: "COMBINING GRAPHEME JOINER",
    0x061C: "ARABIC LETTER MARK",
    0x115F: "HANGUL CHOSEONG FILLER",
    0x1160: "HANGUL JUNGSEONG FILLER",
    0x17B4: "KHMER VOWEL INHERENT AQ",
    0x17B5: "KHMER VOWEL INHERENT AA",
    0x180E: "MONGOLIAN VOWEL SEPARATOR",
    0x200B: "ZERO WIDTH SPACE",
    0x200C: "ZERO WIDTH NON-JOINER",
    0x200D: "ZERO WIDTH JOINER",
    0x200E: "LEFT-TO-RIGHT MARK",
    0x200F: "RIGHT-TO-LEFT MARK",
    0x2060: "WORD JOINER",
    0x2061: "FUNCTION APPLICATION",
    0x2062: "INVISIBLE TIMES",
    0x2063: "INVISIBLE SEPARATOR",
    0x2064: "INVISIBLE PLUS",
    0x3164: "HANGUL FILLER",
    0xFEFF: "ZERO WIDTH NO-BREAK SPACE",
    0xFFA0: "HALFWIDTH HANGUL FILLER",
}
_INVISIBLE_RANGES: Final = (
    (0x202A, 0x202E, "a bidirectional control"),
    (0x2066, 0x2069, "a bidirectional isolate"),
    (0x206A, 0x206F, "a deprecated format character"),
    (0xE0000, 0xE007F, "a tag character"),
    (0xFFF9, 0xFFFB, "an interlinear annotation character"),
)


def _emoji_part(char: str) -> bool:
    """Part of an emoji sequence: what a ZERO WIDTH JOINER may legitimately join."""
    code = ord(char)
    return (
        0x1F000 <= code <= 0x1FAFF
        or 0x2190 <= code <= 0x2BFF
        or code in (0xFE0F, 0x20E3, 0x00A9, 0x00AE)
    )


def _joins_letters(text: str, index: int) -> bool:
    """A ZERO WIDTH NON-JOINER between two letters of a script that needs it
    (Persian, the Indic scripts): spelling, not hiding."""
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    return all(c and c.isalpha() and ord(c) > 0x5FF for c in (before, after))


def _joins_emoji(text: str, index: int) -> bool:
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    return bool(before and after) and _emoji_part(before) and _emoji_part(after)


def _invisible(text: str) -> str | None:
    for index, char in enumerate(text):
        code = ord(char)
        if code == 0x200D and _joins_emoji(text, index):
            continue
        if code == 0x200C and _joins_letters(text, index):
            continue
        name = _INVISIBLE.get(code)
        if name is None:
            for low, high, what in _INVISIBLE_RANGES:
                if low <= code <= high:
                    name = f"{what}, {unicodedata.name(char, 'unnamed')}"
                    break
        if name is not None:
            return f"U+{code:04X} ({name}) at character {index + 1}"
    return None


def _normal(text: str) -> str:
    """The text as matched: compatibility forms folded (full-width letters, ligatures)."""
    return unicodedata.normalize("NFKC", text)


def check_text(text: str, *, limit: int, what: str) -> None:
    """Raise MemoryRejected when ``text`` may not go into memory."""
    if len(text) > limit:
        raise MemoryRejected(
            OVERSIZED, f"{what} is {len(text):,} characters; the limit is {limit:,}"
        )
    hidden = _invisible(text)
    if hidden is not None:
        raise MemoryRejected(
            INVISIBLE, f"{what} holds an invisible character: {hidden}; remove it and try again"
        )
    normal = _normal(text)
    if holds_key(text) or holds_key(normal):
        raise MemoryRejected(
            CREDENTIALS,
            f"{what} holds what looks like an API key, token or password; "
            "memory never keeps secrets",
        )
    for pattern in _EXFILTRATION:
        if pattern.regex.search(normal):
            raise MemoryRejected(
                CREDENTIALS, f"{what} holds {pattern.what}; memory never keeps such text"
            )
    for pattern in _INJECTION:
        if pattern.regex.search(normal):
            raise MemoryRejected(
                INJECTION,
                f"{what} holds {pattern.what}; memory keeps notes, not instructions to the model",
            )


def check_fact(key: str, value: str) -> None:
    """The guards on one fact: a short one-line key and a bounded value."""
    if not key.strip():
        raise MemoryWriteError("a fact needs a key")
    if "\n" in key or "\r" in key:
        raise MemoryWriteError("a fact's key is one line")
    check_text(key, limit=FACT_KEY_LIMIT, what="the key")
    if not value.strip():
        raise MemoryWriteError("a fact needs a value")
    check_text(value, limit=FACT_VALUE_LIMIT, what="the value")
