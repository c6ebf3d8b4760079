"""The handoff doc: what a conversation did, kept for the next session (or for
the same one after a compaction), in ``<workspace>/.sparrow/handoff/<ts>.md``.

``distill`` applies the reference's plain rules to the conversation's texts;
nothing asks a model. The Markdown has stable sections, an empty one reads
``_none_``, and ``HandoffDoc.parse`` reads what ``to_markdown`` wrote back into
the same doc, exactly, so that tools can rely on the shape.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from server.core.events import (
    Event,
    RunStarted,
    TextDelta,
    ToolRequested,
    ToolResult,
    TurnDiscarded,
)
from server.engine.transcript import BadLine

DEFAULT_TASK = "ad-hoc handoff"
NONE = "_none_"
TITLE = "# Handoff"
HANDOFF_DIR = Path(".sparrow") / "handoff"

# (heading, field), in the order of the doc.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("Task", "task"),
    ("Files modified", "files_modified"),
    ("Decisions", "decisions"),
    ("Tests run", "tests_run"),
    ("Blockers", "blockers"),
    ("Next steps", "next_steps"),
    ("Context", "context"),
)
_TEXT_FIELDS = frozenset({"task", "context"})


@dataclass
class HandoffDoc:
    task: str
    files_modified: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    tests_run: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    context: str = ""  # the ContextMeter's summary line, when one was attached

    def to_markdown(self) -> str:
        parts = [TITLE]
        for heading, name in SECTIONS:
            value = getattr(self, name)
            body = _text_body(value) if name in _TEXT_FIELDS else _list_body(value)
            parts.append(f"## {heading}\n\n{body}")
        return "\n\n".join(parts) + "\n"

    @classmethod
    def parse(cls, text: str) -> HandoffDoc:
        """The doc ``to_markdown`` wrote; a ValueError saying what is wrong otherwise."""
        lines = text.split("\n")
        starts = _section_starts(lines)
        texts: dict[str, str] = {}
        lists: dict[str, list[str]] = {}
        for k, (heading, name) in enumerate(SECTIONS):
            first = starts[k] + 1
            end = starts[k + 1] if k + 1 < len(starts) else len(lines)
            body = lines[first:end]
            # One blank line follows each heading and ends each section.
            if body and body[0] == "":
                body, first = body[1:], first + 1
            if body and body[-1] == "":
                body = body[:-1]
            if name in _TEXT_FIELDS:
                texts[name] = _parse_text(body)
            else:
                lists[name] = _parse_list(heading, body, first)
        return cls(
            task=texts["task"],
            files_modified=lists["files_modified"],
            decisions=lists["decisions"],
            tests_run=lists["tests_run"],
            blockers=lists["blockers"],
            next_steps=lists["next_steps"],
            context=texts["context"],
        )

    def to_dict(self) -> dict[str, object]:
        return {
            name: (list(value) if isinstance(value, list) else value)
            for name, value in ((name, getattr(self, name)) for _, name in SECTIONS)
        }


# --- Markdown ------------------------------------------------------------------
#
# A list item's further lines are indented by two spaces. A text's line that
# could pass for a heading, for `_none_` or for an escape gets a backslash,
# which parse removes: so every text and every list comes back as it was.


def _text_body(text: str) -> str:
    if not text:
        return NONE
    return "\n".join(
        "\\" + line if line.startswith(("\\", "#")) or line == NONE else line
        for line in text.split("\n")
    )


def _list_body(items: list[str]) -> str:
    if not items:
        return NONE
    return "\n".join("- " + item.replace("\n", "\n  ") for item in items)


def _section_starts(lines: list[str]) -> list[int]:
    """The line index of each section's heading, in SECTIONS order."""
    expected = [heading for heading, _ in SECTIONS]
    found = [(i, line[3:].strip()) for i, line in enumerate(lines) if line.startswith("## ")]
    if not found:
        raise ValueError(
            f"not a handoff doc: it has no '## ' sections; a handoff doc has {_listing(expected)}"
        )
    for i, heading in found:
        if heading not in expected:
            raise ValueError(
                f"not a handoff doc: unexpected section '## {heading}' (line {i + 1}); "
                f"a handoff doc has {_listing(expected)}"
            )
    names = [heading for _, heading in found]
    for heading in expected:
        if heading not in names:
            raise ValueError(f"not a handoff doc: no '## {heading}' section")
    if names != expected:
        raise ValueError(
            f"not a handoff doc: its sections are {_listing(names)}; "
            f"a handoff doc has {_listing(expected)}, once each, in this order"
        )
    return [i for i, _ in found]


def _listing(headings: list[str]) -> str:
    return ", ".join(headings)


def _parse_text(body: list[str]) -> str:
    if body == [NONE]:
        return ""
    return "\n".join(line[1:] if line.startswith("\\") else line for line in body)


def _parse_list(heading: str, body: list[str], first: int) -> list[str]:
    if body == [NONE]:
        return []
    items: list[str] = []
    for offset, line in enumerate(body):
        if line == "-" or line.startswith("- "):
            items.append(line[2:])
        elif line.startswith("  ") and items:
            items[-1] += "\n" + line[2:]
        elif line.strip():
            raise ValueError(
                f"not a handoff doc: line {first + offset + 1}, in '## {heading}', is "
                f"neither a list item ('- …') nor {NONE}: {line[:80]!r}"
            )
    return items


# --- distilling ----------------------------------------------------------------

_LIST_MARKER = re.compile(r"(?:[-*+>]|\d+[.)])\s+")
_DECISION = re.compile(r"decision:", re.IGNORECASE)
_TESTS = re.compile(r"cargo test|npm test|pytest", re.IGNORECASE)
_BLOCKER = re.compile(r"\bblocker:|\bblocked by\b", re.IGNORECASE)
# A word, cut at what cannot be part of a path as people write one in prose.
_WORD = re.compile(r"[^\s`'\"()\[\]{}<>,;|=*]+")
_PATH = re.compile(r"[\w\-.~@+/]*[\w\-]\.([A-Za-z][A-Za-z0-9]*)")
# Without a slash, only these count as a file's extension: a bare `os.path`,
# `e.g` or `example.com` is not a file.
KNOWN_EXTENSIONS = frozenset(
    (
        "py", "pyi", "pyx", "rs", "go", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "java", "kt",
        "kts", "scala", "swift", "rb", "php", "pl", "lua", "jl", "js", "mjs", "cjs", "ts", "tsx",
        "jsx", "vue", "svelte", "html", "htm", "css", "scss", "sass", "less", "json", "jsonl",
        "json5", "toml", "yaml", "yml", "xml", "ini", "cfg", "conf", "lock", "md", "markdown",
        "rst", "txt", "adoc", "tex", "bib", "csv", "tsv", "sql", "graphql", "proto", "sh", "bash",
        "zsh", "fish", "ps1", "bat", "cmd", "mk", "cmake", "gradle", "dockerfile", "tf", "hcl",
        "nix", "dart", "ex", "exs", "erl", "hrl", "hs", "ml", "mli", "clj", "cljs", "vim", "zig",
        "nim", "ipynb", "svg", "png", "jpg", "jpeg", "gif", "webp", "ico", "pdf", "wasm", "diff",
        "patch", "j2", "jinja", "tmpl", "cs", "vb",
    )
)


def distill(texts: Iterable[str], *, task: str = "", context: str = "") -> HandoffDoc:
    """A handoff doc from a conversation's texts, by the reference's rules; each
    list keeps the first of equal entries, in the order they came."""
    files: dict[str, None] = {}
    decisions: dict[str, None] = {}
    tests: dict[str, None] = {}
    blockers: dict[str, None] = {}
    for text in texts:
        files.update(dict.fromkeys(file_paths(text)))
        for raw in text.splitlines():
            line = raw.strip()
            marker = _LIST_MARKER.match(line)
            if marker is not None:
                line = line[marker.end() :]
            if not line:
                continue
            if _DECISION.match(line):
                decisions[line] = None
            if _TESTS.search(line):
                tests[line] = None
            if _BLOCKER.search(line):
                blockers[line] = None
    return HandoffDoc(
        task=task.strip() or DEFAULT_TASK,
        files_modified=list(files),
        decisions=list(decisions),
        tests_run=list(tests),
        blockers=list(blockers),
        next_steps=[],
        context=context,
    )


def file_paths(text: str) -> list[str]:
    """The words of ``text`` that look like paths of files with an extension."""
    found: dict[str, None] = {}
    for match in _WORD.finditer(text):
        word = match.group()
        if "://" in word or "//" in word:
            continue
        word = word.split(":", 1)[0].rstrip(".!?")  # app.py:12, tests/t.py::test_x, "app.py."
        word = word.removeprefix("./")
        path = _PATH.fullmatch(word)
        if path is None:
            continue
        if "/" in word or path.group(1).lower() in KNOWN_EXTENSIONS:
            found[word] = None
    return list(found)


# --- a conversation's texts ------------------------------------------------------

# A run_shell result that says how the command ended: it ran (passing or not),
# where a denied or refused one says why it did not.
_SHELL_RAN = ("exit code ", "timed out after ")
_FILE_VERBS = {"write_file": "wrote", "edit_file": "edited", "delete_file": "deleted"}


def conversation_texts(events: Iterable[Event | BadLine]) -> list[str]:
    """What ``distill`` reads from a conversation's transcripts: each user task,
    the text of each turn (without a turn the stream dropped), and one line per
    tool call that did its work: ``wrote PATH`` (``edited``, ``deleted``) for a
    file changed, the command line for a command that ran."""
    texts: list[str] = []
    turn_at: dict[tuple[str, int], int] = {}  # a turn's text: where it is in ``texts``
    pending: dict[tuple[str, str], str] = {}  # a call's line, until its result says it ran
    for event in events:
        if isinstance(event, RunStarted):
            texts.append(event.task)
        elif isinstance(event, TextDelta):
            key = (event.run_id, event.turn)
            if key not in turn_at:
                turn_at[key] = len(texts)
                texts.append("")
            texts[turn_at[key]] += event.text
        elif isinstance(event, TurnDiscarded):
            # The retry of the turn streams again: it starts a text of its own.
            at = turn_at.pop((event.run_id, event.turn), None)
            if at is not None:
                texts[at] = ""
        elif isinstance(event, ToolRequested):
            line = _call_line(event.tool, event.args)
            if line:
                pending[(event.run_id, event.call_id)] = line
        elif isinstance(event, ToolResult):
            line = pending.pop((event.run_id, event.call_id), "")
            ran = event.ok or (event.tool == "run_shell" and event.output.startswith(_SHELL_RAN))
            if line and ran:
                texts.append(line)
    return [text for text in texts if text]


def _call_line(tool: str, args: dict[str, object]) -> str:
    if tool in _FILE_VERBS:
        path = args.get("path")
        return f"{_FILE_VERBS[tool]} {path}" if isinstance(path, str) and path else ""
    if tool == "run_shell":
        command = args.get("command")
        return command if isinstance(command, str) else ""
    return ""


# --- on disk ---------------------------------------------------------------------


def write_handoff(
    doc: HandoffDoc, workspace: Path, out: Path | None = None, now: float | None = None
) -> Path:
    """Write ``doc`` to ``out``, else to a new ``<workspace>/.sparrow/handoff/<ts>.md``
    (UTC, like run ids; ``-2``, ``-3``… after a name already taken); its path."""
    text = doc.to_markdown()
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        return out
    folder = workspace / HANDOFF_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    number = 1
    while True:
        path = folder / (f"{stamp}.md" if number == 1 else f"{stamp}-{number}.md")
        try:
            # "x": two handoffs in the same second, even from two processes, both stay.
            with path.open("x", encoding="utf-8", newline="") as handle:
                handle.write(text)
        except FileExistsError:
            number += 1
            continue
        return path
