"""A search hit's snippet, made here from its text rather than by FTS5's
``snippet()``: that one runs the query again for each hit, which for a common
word being typed costs a whole prefix scan per hit. Words fold as the index's
tokenizer folds them (case, diacritics), so the words it matched are marked."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

TOKEN = re.compile(r"\w+")
WINDOW = 16  # tokens shown
LEAD = 4  # of them before the first match


def fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


class Terms:
    """The folded words of a search; the last may match as a prefix."""

    def __init__(self, words: list[str], prefix: bool) -> None:
        tokens = [fold(t) for w in words for t in TOKEN.findall(w)]
        self.whole = set(tokens[:-1] if prefix else tokens)
        self.start = tokens[-1] if prefix and tokens else None

    def match(self, token: str) -> bool:
        folded = fold(token)
        return folded in self.whole or (self.start is not None and folded.startswith(self.start))


def snippet(text: str, terms: Terms) -> list[dict[str, Any]]:
    """About WINDOW tokens of ``text`` around its first match, as plain-text
    segments with the matched words marked."""
    tokens = list(TOKEN.finditer(text))
    first = next((i for i, t in enumerate(tokens) if terms.match(t.group())), 0)
    begin = max(0, min(first - LEAD, len(tokens) - WINDOW))
    shown = tokens[begin : begin + WINDOW]
    if not shown:
        return [{"text": text[:200], "match": False}] if text else []
    out: list[dict[str, Any]] = []

    def add(piece: str, matched: bool) -> None:
        if not piece:
            return
        if out and out[-1]["match"] == matched:
            out[-1]["text"] += piece
        else:
            out.append({"text": piece, "match": matched})

    add("…" if begin > 0 else text[: shown[0].start()], False)
    at = shown[0].start()
    for token in shown:
        add(text[at : token.start()], False)
        add(token.group(), terms.match(token.group()))
        at = token.end()
    end = begin + len(shown)
    add("…" if end < len(tokens) else text[at:], False)
    return out
