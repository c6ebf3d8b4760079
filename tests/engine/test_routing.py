"""The task classifier: rules on the prompt and the workspace, no model call."""

from pathlib import Path

import pytest

from server.engine.routing import TaskClass, classify_task

Q, S, L, R = (
    TaskClass.QUESTION,
    TaskClass.SMALL_EDIT,
    TaskClass.LARGE_CHANGE,
    TaskClass.LONG_RUNNING,
)


@pytest.mark.parametrize(
    ("task", "expected", "why"),
    [
        ("What does server/app.py do?", Q, "asks"),
        ("Explain the checkpoint store", Q, "asks"),
        ("how do I fix the failing test?", Q, "asks"),
        ("Where is the config read", Q, "asks"),
        ("summarize the README", Q, "asks"),
        ("list the TODOs in this repo", Q, "asks"),
        ("Fix the typo in README.md", S, "short request to fix"),
        ("can you fix the off-by-one in pager.py?", S, "short request to fix"),
        ("Rename `load` to `read_config`", S, "short request to renam"),
        ("bump the version to 0.2.0", S, "short request to bump"),
        ("Implement pagination for the runs list", L, "“Implement”"),
        ("Refactor the CLI into one module per command", L, "“Refactor”"),
        ("Add a new endpoint for exporting sessions", L, "“Add a new endpoint”"),
        ("build a small CLI that converts CSV to JSON", L, "“build a small CLI”"),
        ("Update a.py, b.py and c/d.py to use the new API", L, "names 3 files"),
        ("Please do these:\n1. tidy x\n2. tidy y\n3. tidy z", L, "lists 3 steps"),
        ("Migrate the tests from unittest to pytest", R, "“Migrate”"),
        ("Fix lint errors in every file", R, "“every file”"),
        ("keep going until all tests pass", R, "“keep going”"),
        ("Port the whole codebase to Python 3.12", R, "“Port the”"),
        ("Steps:\n- a\n- b\n- c\n- d\n- e\n- f", R, "lists 6 steps"),
        ("x " * 1100, R, "characters long"),
        ("the login page looks odd", S, "middle way"),
    ],
)
def test_tasks_are_classified_by_their_words(
    task: str, expected: TaskClass, why: str
) -> None:
    found = classify_task(task)
    assert (found.task_class, why in found.why) == (expected, True), found


def test_creating_in_an_empty_folder_is_a_large_change(tmp_path: Path) -> None:
    empty = tmp_path / "new"
    empty.mkdir()
    (empty / ".git").mkdir()  # hidden entries do not count
    assert classify_task("write a snake game", empty).task_class == L
    (empty / "main.py").write_text("")
    assert classify_task("write a snake game", empty).task_class == S
