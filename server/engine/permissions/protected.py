"""The paths no rule can open: ``.git``, ``.env``, ``.env.local``, ``.ssh``,
``id_rsa``, ``id_ed25519`` (autonomy-and-safety.md, default denied paths),
wherever they sit in the workspace.

Compared after Unicode normalisation and case folding: on a case-insensitive
file system ``.ENV`` is ``.env``, and on any other refusing it costs nothing."""

from __future__ import annotations

import re
import unicodedata
from typing import Final

PROTECTED_NAMES: Final = (".git", ".env", ".env.local", ".ssh", "id_rsa", "id_ed25519")
_FOLDED: Final = frozenset(PROTECTED_NAMES)
_SEPARATORS: Final = re.compile(r"[\\/]+")


def fold(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


def protected_part(path: str) -> str | None:
    """The protected name among the components of ``path``, if any."""
    for part in _SEPARATORS.split(path):
        folded = fold(part).rstrip(" .") if part not in (".", "..") else part
        if fold(part) in _FOLDED or folded in _FOLDED:
            return part
    return None


def word_pieces(word: str) -> list[str]:
    """The paths a shell word may name: itself, and the parts of ``--opt=VALUE``
    or ``a:b`` lists, unquoted."""
    return [piece.strip("'\"") for piece in re.split(r"[=:,]", word)]


def protected_word(word: str) -> str | None:
    """A shell word naming a protected path, also inside ``--opt=VALUE`` or
    ``a:b`` lists (``cat .env``, ``--env-file=.env``, ``$HOME/.ssh/id_rsa``)."""
    for piece in word_pieces(word):
        found = protected_part(piece)
        if found is not None:
            return found
    return None
