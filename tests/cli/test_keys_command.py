"""`sparrow keys` against a real Secret Service (gnome-keyring in the tests'
private D-Bus session), and with no keyring at all."""

from __future__ import annotations

import os
import select
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.core import credentials
from tests.cli.test_cli import SPARROW, ndjson
from tests.conftest import require

KEY = "sk-ant-api03-canaryCANARY0123456789abcdef"


def keys(
    *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`sparrow keys ARGS`; ``env``: the whole environment (default: the tests')."""
    return subprocess.run(
        [SPARROW, "keys", *args], input=stdin, capture_output=True, text=True, timeout=60,
        env=os.environ if env is None else env,
    )


def no_dbus() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    return env


@pytest.fixture
def keyring() -> Iterator[None]:
    """The real Secret Service of the test session, left as found."""
    require("a Secret Service (run the tests through scripts/test-session.sh)",
            credentials.keyring_status().ok)
    yield
    for name in ("anthropic", "openai", "openrouter"):
        credentials.remove_key(name)


def _everything_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_set_list_remove_through_the_real_keyring(keyring: None, sparrow_home: Path) -> None:
    stored = keys("set", "anthropic", stdin=KEY + "\n")
    assert stored.returncode == 0, stored.stderr
    assert stored.stdout == "stored the anthropic key in the OS keyring (…cdef)\n"
    assert credentials.find_key("anthropic", ()) == credentials.Credential(
        "anthropic", KEY, "keyring"
    )
    listed = keys("list")
    assert "anthropic   keyring …cdef" in listed.stdout
    assert "openai      not set (sparrow keys set openai, or OPENAI_API_KEY)" in listed.stdout
    assert "ollama      no key needed" in listed.stdout
    rows = {r["provider"]: r for r in ndjson(keys("list", "--json").stdout)}
    assert rows["anthropic"] == {"provider": "anthropic", "state": "keyring",
                                 "masked": "…cdef", "env": "ANTHROPIC_API_KEY"}
    assert keys("remove", "anthropic").stdout == "removed the anthropic key from the keyring\n"
    assert keys("remove", "anthropic").stdout == "no anthropic key was stored\n"
    assert credentials.find_key("anthropic", ()) is None
    # The key went to the keyring only: nowhere on disk under SPARROW_HOME, never printed.
    assert KEY.encode() not in _everything_under(sparrow_home)
    for result in (stored, listed):
        assert KEY not in result.stdout + result.stderr


def test_the_environment_is_a_fallback_shown_as_such(keyring: None) -> None:
    env = {**os.environ, "OPENAI_API_KEY": "sk-proj-fromtheenvironment0123"}
    assert "openai      OPENAI_API_KEY …0123 (environment)" in keys("list", env=env).stdout
    keys("set", "openai", stdin="sk-proj-fromthekeyring99999999\n")
    # The keyring wins over the environment.
    assert "openai      keyring …9999" in keys("list", env=env).stdout


@pytest.mark.parametrize(
    ("given", "problem"),
    [("", "the key is empty"), ("sk-ant-a b\n", "has spaces or line breaks inside")],
)
def test_a_bad_key_is_refused_and_nothing_stored(keyring: None, given: str, problem: str) -> None:
    result = keys("set", "anthropic", stdin=given)
    assert result.returncode == 2 and problem in result.stderr
    assert credentials.find_key("anthropic", ()) is None


def test_an_unknown_provider_names_the_known_ones() -> None:
    result = keys("set", "anthropik", stdin=KEY)
    assert result.returncode == 2
    assert "unknown provider 'anthropik'; known: anthropic, llamacpp" in result.stderr


def test_on_a_terminal_the_key_is_read_without_echo(keyring: None) -> None:
    master, slave = os.openpty()
    proc = subprocess.Popen([SPARROW, "keys", "set", "openrouter"], stdin=slave, stdout=slave,
                            stderr=slave, close_fds=True)
    os.close(slave)
    seen = b""
    try:
        while b"(not shown): " not in seen:
            ready, _, _ = select.select([master], [], [], 30)
            assert ready, seen
            seen += os.read(master, 4096)
        os.write(master, b"sk-or-v1-typedonaterminal00000000\n")
        while proc.poll() is None or select.select([master], [], [], 0.2)[0]:
            ready, _, _ = select.select([master], [], [], 30)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        assert proc.wait(30) == 0
    finally:
        os.close(master)
    screen = seen.decode()
    assert "sk-or-v1-typedonaterminal" not in screen  # not echoed
    assert "stored the openrouter key in the OS keyring (…0000)" in screen
    assert credentials.find_key("openrouter", ()) is not None


def test_without_a_keyring_it_says_so_and_writes_no_file(
    keyring: None, sparrow_home: Path
) -> None:
    result = keys("set", "anthropic", stdin=KEY, env=no_dbus())
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "sparrow: no secure store for keys: there is no D-Bus session, so the Secret Service "
        "(GNOME Keyring, KWallet) cannot be reached. Sparrow never writes a key to a file: "
        "export ANTHROPIC_API_KEY=… instead"
    )
    assert KEY.encode() not in _everything_under(sparrow_home)
    assert credentials.find_key("anthropic", ()) is None
    listed = subprocess.run([SPARROW, "keys", "list"], capture_output=True, text=True,
                            env={**no_dbus(), "ANTHROPIC_API_KEY": KEY})
    assert "anthropic   ANTHROPIC_API_KEY …cdef (environment)" in listed.stdout
    assert "the keyring is not available: no secure store for keys" in listed.stderr


def test_a_plaintext_keyring_backend_is_not_a_secure_store(sparrow_home: Path) -> None:
    """keyring's own 'fail' backend, as PYTHON_KEYRING_BACKEND can force it."""
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    result = subprocess.run([SPARROW, "keys", "set", "openai"], input=KEY, capture_output=True,
                            text=True, env=env)
    assert result.returncode == 2 and "no secure store for keys" in result.stderr
