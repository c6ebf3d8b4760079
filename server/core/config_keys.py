"""How a settings error names a key: as the file spells it, so that the user
can find it. ``config.toml: [shell] timeout_seconds``, ``config.toml:
[providers.local] base_url``, ``config.toml: key`` for one outside any table."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def toml_name(key: str) -> str:
    """``key`` as TOML writes it: bare when it can be, else quoted (``"gpt-4.1"``)."""
    # TOML's basic strings escape as JSON does for everything a key holds.
    return key if _BARE.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def table_header(tables: Sequence[str]) -> str:
    return "[" + ".".join(toml_name(t) for t in tables) + "]"


def config_key(file: str, tables: Sequence[str], key: str) -> str:
    """``key`` of the table ``tables`` (outermost first; empty: top level) in ``file``."""
    if not tables:
        return f"{file}: {toml_name(key)}"
    return f"{file}: {table_header(tables)} {toml_name(key)}"
