"""The handoff doc: its Markdown and back, the reference's distilling rules,
where it is written, and what a real run's transcript gives it."""

from __future__ import annotations

import calendar
from pathlib import Path

import pytest

from server.core.events import TextDelta, ToolRequested, ToolResult, TurnDiscarded
from server.core.paths import Paths
from server.engine.handoff import HandoffDoc, conversation_texts, distill, write_handoff
from server.engine.transcript import read_transcript
from tests.cli.test_compact_command import FIRST_TURNS, scripted_run

NOW = float(calendar.timegm((2026, 11, 26, 1, 58, 0, 0, 0, 0)))

FULL = HandoffDoc(
    task="ship phase 12",
    files_modified=["src/app.py", "README.md"],
    decisions=["decision: one module"],
    tests_run=["pytest -q", "cargo test --all"],
    blockers=["blocked by review"],
    next_steps=["merge it", "tell the team"],
    context="ctx 21% · prompt 1200 · memory 200",
)

EMPTY_MARKDOWN = """# Handoff

## Task

t

## Files modified

_none_

## Decisions

_none_

## Tests run

_none_

## Blockers

_none_

## Next steps

_none_

## Context

_none_
"""


def test_a_written_doc_parses_back_to_itself(tmp_path: Path) -> None:
    path = write_handoff(FULL, tmp_path, now=NOW)
    assert path == tmp_path / ".sparrow" / "handoff" / "20261126-015800.md"
    text = path.read_text(encoding="utf-8")
    assert HandoffDoc.parse(text) == FULL
    assert "## Next steps\n\n- merge it\n- tell the team\n" in text
    assert FULL.to_dict() == {
        "task": "ship phase 12",
        "files_modified": ["src/app.py", "README.md"],
        "decisions": ["decision: one module"],
        "tests_run": ["pytest -q", "cargo test --all"],
        "blockers": ["blocked by review"],
        "next_steps": ["merge it", "tell the team"],
        "context": "ctx 21% · prompt 1200 · memory 200",
    }


@pytest.mark.parametrize(
    "doc",
    [
        HandoffDoc(task=""),
        HandoffDoc(task="_none_", files_modified=["_none_"], context="_none_"),
        HandoffDoc(task="## Decisions\n# title\n\\escaped\n", next_steps=["## Blockers"]),
        HandoffDoc(task="\nleading and trailing\n\n", context=" "),
        HandoffDoc(task="t", decisions=["two\nlines", "", "\n  indented\n", "- a dash"]),
        HandoffDoc(task="t", blockers=["x", "x"], tests_run=["\\", "#"]),
    ],
)
def test_whatever_the_content_the_round_trip_is_exact(doc: HandoffDoc) -> None:
    assert HandoffDoc.parse(doc.to_markdown()) == doc


def test_an_empty_section_reads_none() -> None:
    assert HandoffDoc(task="t").to_markdown() == EMPTY_MARKDOWN
    assert HandoffDoc.parse(EMPTY_MARKDOWN) == HandoffDoc(task="t")


def test_handoffs_of_the_same_second_each_get_a_file(tmp_path: Path) -> None:
    one = write_handoff(HandoffDoc(task="one"), tmp_path, now=NOW)
    two = write_handoff(HandoffDoc(task="two"), tmp_path, now=NOW)
    assert two.name == "20261126-015800-2.md"
    assert HandoffDoc.parse(one.read_text(encoding="utf-8")).task == "one"
    assert HandoffDoc.parse(two.read_text(encoding="utf-8")).task == "two"


def test_out_is_written_with_its_folders(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "handoff.md"
    assert write_handoff(FULL, tmp_path / "workspace", out) == out
    assert HandoffDoc.parse(out.read_text(encoding="utf-8")) == FULL
    assert not (tmp_path / "workspace").exists()


# --- distill ----------------------------------------------------------------


def test_files_are_words_with_an_extension_once_each_in_first_seen_order() -> None:
    doc = distill(
        [
            "I changed src/app.py and README.md, then ./src/app.py again.",
            "Failures: tests/test_app.py::test_one and app/main.rs:12.",
            "See https://example.com/page.html, e.g. os.path or example.com; v1.2.3 and 3.14.",
            "wrote docs/guide.md",
        ]
    )
    assert doc.files_modified == [
        "src/app.py",
        "README.md",
        "tests/test_app.py",
        "app/main.rs",
        "docs/guide.md",
    ]


def test_decisions_are_lines_that_begin_with_decision() -> None:
    doc = distill(
        ["decision: use SQLite\nThe decision: was not made here\n  - Decision: no ORM\nother"]
    )
    assert doc.decisions == ["decision: use SQLite", "Decision: no ORM"]


def test_tests_run_are_lines_with_a_test_command() -> None:
    doc = distill(["cargo test -p core\nnpm test\nran pytest -q twice\nmake lint", "pytest -q"])
    assert doc.tests_run == ["cargo test -p core", "npm test", "ran pytest -q twice", "pytest -q"]


def test_blockers_are_lines_with_blocker_or_blocked_by() -> None:
    doc = distill(["blocker: no key\nWe are blocked by the review.\nunblocked by the fix\nfine"])
    assert doc.blockers == ["blocker: no key", "We are blocked by the review."]


def test_the_task_defaults_next_steps_are_empty_and_context_is_kept() -> None:
    doc = distill(["decision: x"], context="ctx 10%")
    assert (doc.task, doc.next_steps, doc.context) == ("ad-hoc handoff", [], "ctx 10%")
    assert distill([], task="ship it").task == "ship it"
    assert distill([]) == HandoffDoc(task="ad-hoc handoff")


# --- parse refuses what is not a handoff doc ---------------------------------


def _without(heading: str) -> str:
    text = FULL.to_markdown()
    start = text.index(f"## {heading}")
    return text[:start] + text[text.index("## ", start + 3) :]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Just some notes.\n", "not a handoff doc: it has no '## ' sections"),
        (_without("Decisions"), "not a handoff doc: no '## Decisions' section"),
        (
            FULL.to_markdown() + "\n## Notes\n\nmore\n",
            r"unexpected section '## Notes' \(line 34\)",
        ),
        (
            FULL.to_markdown().replace("## Blockers", "## X").replace("## Tests run", "## Blockers")
            .replace("## X", "## Tests run"),
            "its sections are Task, Files modified, Decisions, Blockers, Tests run,",
        ),
        (
            FULL.to_markdown().replace("- blocked by review", "blocked by review"),
            r"line 23, in '## Blockers', is neither a list item \('- …'\) nor _none_",
        ),
    ],
)
def test_parse_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HandoffDoc.parse(text)


# --- a conversation's texts, from real runs -----------------------------------


def test_a_run_gives_its_task_its_texts_and_the_calls_that_did_their_work(
    workspace: Path, tmp_path: Path, paths: Paths
) -> None:
    run_id = scripted_run(tmp_path, "write the handoff", FIRST_TURNS, "-w", str(workspace))
    texts = conversation_texts(read_transcript(paths.transcript(run_id)))
    assert texts == [
        "write the handoff",
        FIRST_TURNS[0]["text"],
        "wrote src/handoff.py",
        "edited src/handoff.py",
        "pytest -q",  # it ran, though it failed: no tests in an empty folder
        FIRST_TURNS[1]["text"],
    ]


def test_calls_that_were_denied_are_not_in_it(
    workspace: Path, tmp_path: Path, paths: Paths
) -> None:
    run_id = scripted_run(
        tmp_path,
        "try",
        [
            {
                "text": "Trying.",
                "tool_calls": [
                    {"tool": "write_file", "args": {"path": "nope.py", "content": "x"}},
                    {"tool": "run_shell", "args": {"command": "pytest -q"}},
                ],
            },
            {"text": "Could not."},
        ],
        "-w",
        str(workspace),
        "--mode",
        "read-only",
    )
    texts = conversation_texts(read_transcript(paths.transcript(run_id)))
    assert texts == ["try", "Trying.", "Could not."]
    assert distill(texts) == HandoffDoc(task="ad-hoc handoff")


def test_a_discarded_turn_is_not_in_it_but_its_retry_is() -> None:
    events = [
        TextDelta(run_id="r", seq=1, turn=1, text="decision: half"),
        TurnDiscarded(run_id="r", seq=2, turn=1, reason="the connection dropped"),
        TextDelta(run_id="r", seq=3, turn=1, text="decision: "),
        TextDelta(run_id="r", seq=4, turn=1, text="whole"),
        ToolRequested(
            run_id="r", seq=5, turn=1, call_id="c", tool="write_file",
            args={"path": "gone.py", "content": ""}, risk="Mutating",
        ),
        ToolResult(
            run_id="r", seq=6, turn=1, call_id="c", tool="write_file", ok=False,
            output="gone.py: is a folder",
        ),
    ]
    assert conversation_texts(events) == ["decision: whole"]
