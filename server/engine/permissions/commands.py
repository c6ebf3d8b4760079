"""Shell command lines cut into the commands they run, so that a compound
line (``a && b``, ``a | b``, ``a; b``) is judged part by part."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Final

# Tokens that end one command and start the next.
_SEPARATORS: Final = frozenset({"&&", "||", ";", "|", "&", "|&", ";;", ";&", "&;"})
# Text whose effect no prefix rule can vouch for: another command inside this one.
_HIDDEN_COMMAND: Final = re.compile(r"\$\(|`|<\(|>\(")


@dataclass(frozen=True)
class CommandLine:
    parts: tuple[str, ...]  # each command, its words joined by one space
    words: tuple[str, ...]  # every word of every part (for the protected-path check)
    opaque: bool  # not fully understood: substitutions or unbalanced quotes


def split_command(command: str) -> CommandLine:
    opaque = bool(_HIDDEN_COMMAND.search(command))
    parts: list[str] = []
    words: list[str] = []
    # shlex takes a newline for a space; on the shell it ends a command.
    for line in command.splitlines() or [""]:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = ""
        try:
            tokens = list(lexer)
        except ValueError:  # an unbalanced quote: judge the raw text
            opaque = True
            tokens = line.split()
        current: list[str] = []
        for token in tokens:
            if token in _SEPARATORS:
                if current:
                    parts.append(" ".join(current))
                current = []
                continue
            current.append(token)
            words.append(token)
        if current:
            parts.append(" ".join(current))
    return CommandLine(tuple(parts), tuple(words), opaque)


def command_pattern_matches(pattern: str, part: str) -> bool:
    """Claude Code's Bash rule patterns: ``npm test`` is exact, ``npm test:*``
    also matches anything after a space (``npm test --watch``, never
    ``npm tests``); ``*`` elsewhere matches any text."""
    normal = " ".join(part.split())
    wanted = " ".join(pattern.split())
    prefix = wanted.endswith(":*")
    if prefix:
        wanted = wanted[:-2].rstrip()
    regex = ".*".join(re.escape(piece) for piece in wanted.split("*"))
    if prefix:
        regex += r"(?:\s.*)?"
    return re.fullmatch(regex, normal, flags=re.DOTALL) is not None


def mentioned_anywhere(pattern: str, command: str) -> bool:
    """For a line that could not be cut reliably: does the pattern's command
    appear in it at all (a deny or ask rule must not be dodged by quoting)?"""
    wanted = " ".join(pattern.removesuffix(":*").replace("*", " ").split())
    return bool(wanted) and wanted in " ".join(command.split())
