"""No key leaves the process: known key shapes and registered secrets are
blanked in text, in event payloads, in streams split anywhere, and in logs."""

from __future__ import annotations

import random
import re
import subprocess
import sys

import pytest

from server.core.events import TextDelta, ToolRequested
from server.core.redaction import (
    _NAMED,
    _SHAPES,
    MARK,
    StreamRedactor,
    holds_key,
    redact,
    redact_value,
    register_secret,
)
from server.engine.bus import EventBus
from server.engine.channel import RunChannel

ANTHROPIC = "sk-ant-api03-" + "Ab3_" * 20
OPENAI = "sk-proj-" + "x9Y-" * 12


@pytest.mark.parametrize(
    "leak",
    [
        ANTHROPIC,
        OPENAI,
        "sk-or-v1-" + "f" * 64,
        "AIzaSy" + "A" * 33,
        "gsk_" + "a1" * 20,
        "ghp_" + "Z" * 36,
        "AKIA" + "ABCDEFGHIJKLMNOP",
        "xoxb-1234567890-abcdef",
    ],
)
def test_known_key_shapes_are_blanked(leak: str) -> None:
    assert redact(f"key={leak}.") == f"key={MARK}."
    assert leak not in redact(f'{{"key": "{leak}", "other": 1}}')


@pytest.mark.parametrize(
    "line",
    [
        "Authorization: Bearer abcdef0123456789",
        "x-api-key: qwertyuiop1234",
        'api_key = "0123456789abcdef"',
        "curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='",
    ],
)
def test_values_named_as_secrets_are_blanked_and_the_name_kept(line: str) -> None:
    cleaned = redact(line)
    assert MARK in cleaned and cleaned.split(MARK)[0] in line
    assert line.split()[-1].strip("\"'") not in cleaned


@pytest.mark.parametrize(
    "ordinary",
    [
        "the task-list has a risk-free skip-ahead",
        "git commit -m 'sk-learn notes'",
        "def test_sk(): return 'AKIA'",
        "api_key = None",
        "Use the x-api-key header.",
        "a\nb\tc   d",
    ],
)
def test_ordinary_text_is_left_alone(ordinary: str) -> None:
    assert redact(ordinary) == ordinary


def test_registered_secrets_are_blanked_wherever_they_are() -> None:
    secret = "local-server-pass-7f3a9"
    assert redact(f"pw {secret}!") == f"pw {secret}!"
    register_secret(secret)
    register_secret("short")  # too short to be a key: ordinary words would go
    assert redact(f"pw {secret}!") == f"pw {MARK}!"
    assert redact("short words stay") == "short words stay"
    assert redact_value({"a": [secret, 1], "b": {"c": secret}}) == {
        "a": [MARK, 1],
        "b": {"c": MARK},
    }


@pytest.mark.parametrize("at", [1, 5, 12, 20, 40, 60])
def test_a_key_split_across_pieces_never_leaks_even_in_part(at: int) -> None:
    text = f"your key is {ANTHROPIC} and that is all"
    cut = text.index(ANTHROPIC) + at
    stream = StreamRedactor()
    out = stream.feed(text[:cut]) + stream.feed(text[cut:]) + stream.flush()
    assert out == f"your key is {MARK} and that is all"
    shown_pieces = [stream.feed(p) for p in (text[:cut], text[cut:])]
    assert all(ANTHROPIC[:14] not in p for p in shown_pieces)


def test_the_channel_redacts_every_event_and_streams_split_anywhere() -> None:
    register_secret(OPENAI)
    seen: list[object] = []
    channel = RunChannel("r", EventBus(), [seen.append])
    text = f"Here: {OPENAI} done"
    for i in range(0, len(text), 7):
        channel.emit(TextDelta(run_id="r", turn=1, text=text[i : i + 7]))
    channel.emit(
        ToolRequested(
            run_id="r", turn=1, call_id="c", tool="run_shell",
            args={"command": f"echo {OPENAI}"}, risk="Exec",
        )
    )
    deltas = [e for e in seen if isinstance(e, TextDelta)]
    assert "".join(d.text for d in deltas) == f"Here: {MARK} done"
    assert all(OPENAI[:12] not in d.text for d in deltas)
    requested = next(e for e in seen if isinstance(e, ToolRequested))
    assert requested.args == {"command": f"echo {MARK}"}
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))  # type: ignore[attr-defined]


def test_logs_written_to_stderr_are_redacted() -> None:
    """No handler configured: Python's last-resort handler writes to stderr."""
    code = (
        "import logging\n"
        "from server.core.redaction import install_log_redaction, register_secret\n"
        "install_log_redaction()\n"
        "register_secret('my-local-secret-123')\n"
        "log = logging.getLogger('sparrow.test')\n"
        f"log.warning('key %s and %s', {ANTHROPIC!r}, 'my-local-secret-123')\n"
        "try:\n"
        f"    raise RuntimeError('boom with ' + {OPENAI!r})\n"
        "except RuntimeError:\n"
        "    log.exception('failed')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    err = result.stderr
    assert "key [redacted] and [redacted]" in err and "boom with [redacted]" in err
    for secret in (ANTHROPIC, OPENAI, "my-local-secret-123"):
        assert secret not in err


def test_holds_key_sees_what_redact_would_blank() -> None:
    assert holds_key("sk-ant-api03-" + "q" * 30)
    assert holds_key("x-api-key: 0123456789abcdef")
    register_secret("registered-but-shapeless-99")
    assert holds_key("here: registered-but-shapeless-99")
    assert not holds_key("the api key lives in the keyring")


def _secret_names() -> list[str]:
    """Every name _NAMED knows, spelled out from its own source: a name added
    there is covered here without anyone remembering to."""
    source = _NAMED.pattern
    names: list[str] = []
    for group in re.findall(r"\(\?:([a-z\[\]_?|-]+)\)", source):
        for alternative in group.split("|"):
            spellings = [""]
            for piece in re.findall(r"\[_\\?-\]\?|[a-z_-]", alternative):
                options = ["_", "-", ""] if piece.startswith("[") else [piece]
                spellings = [s + o for s in spellings for o in options]
            names.extend(spellings)
    return names


def test_the_quick_test_before_the_named_pattern_never_lets_a_named_value_through() -> None:
    # redact() runs the case-blind _NAMED regex only on text holding a hint of a
    # name; on ASCII text the hint is exact, else the regex always runs.
    names = _secret_names()
    assert {"authorization", "proxy-authorization", "x-api-key", "apikey", "api-key",
            "secret_key", "access-token", "auth_token"} <= set(names)
    rng = random.Random(7)
    cases = ["sk-learn", "token", "key:", "Bearer", "x", " ", "\t", "=", ": ", '"', "'",
             "value0123456789", "\u017f", "\u212a", "\u0130", "\u00e9"]
    for _ in range(3000):
        name = rng.choice(names)
        name = "".join(c.upper() if rng.random() < 0.4 else c for c in name)
        bits = [rng.choice(cases) for _ in range(rng.randint(0, 3))]
        middle = rng.choice(["=", ": ", " = ", "='", '": "', ": bearer ", ": Basic ", ":token "])
        text = "".join(bits) + name + middle + "".join(rng.choice(cases) for _ in range(3))
        expected = _NAMED.sub(lambda m: m.group(1) + MARK, _SHAPES.sub(MARK, text))
        assert redact(text) == expected, text
        assert holds_key(text) == (expected != text), text


@pytest.mark.parametrize(
    # The long s, the Kelvin sign, the dotted capital I: each matches a Latin letter.
    "line",
    ["\u017fecret_key=0123456789ab", "api_\u212aey=0123456789ab", "AP\u0130_KEY=0123456789ab"],
)
def test_a_name_that_matches_only_through_unicode_case_folding_still_counts(line: str) -> None:
    assert redact(line).endswith("=" + MARK)
