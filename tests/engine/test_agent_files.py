"""Agent files: every key checked, and a file that does not pass is listed with
its reason instead of being left out."""

from pathlib import Path

import pytest

from server.engine.agents import AgentFileError, AgentFolder
from server.engine.agents.cron import CronError, check_cron, latest_due, next_after


def agent_text(workspace: Path, extra: str = "", body: str = "Tidy the notes.") -> str:
    return f"---\nworkspace: {workspace}\n{extra}---\n{body}\n"


def test_a_full_file_is_read_with_every_key(tmp_path: Path, workspace: Path) -> None:
    folder = AgentFolder(tmp_path / "agents")
    text = agent_text(
        workspace,
        'name: nightly\nmodel: demo\nmode: trusted\nautonomy: 0.6\nsandbox: worktree\n'
        'schedule: "*/5 * * * *"\nmissed: skip\nbudget:\n  max_tokens: 1000\n'
        "  max_wall_seconds: 30\n",
        body="Look at the notes.\n\nThen tidy them.",
    )
    agent = folder.write("nightly", text)
    assert agent.name == "nightly" and agent.workspace == str(workspace.resolve())
    assert agent.model == "demo" and agent.mode == "trusted" and agent.autonomy == 0.6
    assert agent.sandbox == "worktree" and agent.schedule == "*/5 * * * *"
    assert agent.missed == "skip" and agent.budget == {"max_tokens": 1000, "max_wall_seconds": 30}
    assert agent.task == "Look at the notes.\n\nThen tidy them."
    assert folder.scan().agents == [agent]


def test_a_minimal_file_takes_the_defaults(tmp_path: Path, workspace: Path) -> None:
    agent = AgentFolder(tmp_path).write("plain", agent_text(workspace))
    assert (agent.model, agent.mode, agent.autonomy, agent.sandbox) == (None, None, None, None)
    assert agent.schedule is None and agent.missed == "run-once" and agent.budget == {}


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ("colour: blue\n", "unknown key colour"),
        ('schedule: "61 * * * *"\n', "'schedule': '61 * * * *' is not a cron expression"),
        ('schedule: "0 0 30 2 *"\n', "Bad day-of-month"),
        ("schedule: */5 * * * *\n", "quote a cron expression"),
        ("autonomy: 1.5\n", "the autonomy level must be from 0.0 to 1.0"),
        ("autonomy: high\n", "the autonomy level must be a number"),
        ("mode: reckless\n", "reckless"),
        ("mode: emergency-stop\n", "cannot be emergency-stop"),
        ("sandbox: docker\n", "'sandbox' must be one of local, local-hardened, worktree"),
        ("missed: catch-up\n", "'missed' must be run-once or skip"),
        ("budget: 5\n", "'budget' must be a mapping"),
        ("budget:\n  max_dollars: 5\n", "unknown budget key 'max_dollars'"),
        ("budget:\n  max_tokens: -1\n", "budget.max_tokens must be a number, 0 or more"),
        ("name: other\n", "'name' is 'other' but the file is bad.agent.md"),
        ("model: 7\n", "'model' must be a non-empty string"),
    ],
)
def test_each_bad_key_is_refused_with_its_reason(
    tmp_path: Path, workspace: Path, extra: str, reason: str
) -> None:
    folder = AgentFolder(tmp_path)
    with pytest.raises(AgentFileError, match=None) as caught:
        folder.write("bad", agent_text(workspace, extra))
    assert reason in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "bad.agent.md").exists()  # a refused write loses nothing


def test_missing_parts_are_refused(tmp_path: Path, workspace: Path) -> None:
    folder = AgentFolder(tmp_path)
    cases = {
        "---\nmodel: demo\n---\nDo it.\n": "'workspace' is missing",
        "workspace: here\nDo it.\n": "must start with a front matter block",
        "---\nworkspace: here\nDo it.\n": "the front matter is not closed",
        agent_text(workspace, body=""): "the body is empty",
        agent_text(workspace / "gone"): "is not a folder",
        "---\n- a\n- b\n---\nDo it.\n": "must be a mapping",
    }
    for text, reason in cases.items():
        with pytest.raises(AgentFileError) as caught:
            folder.check("x", text)
        assert reason in str(caught.value), text


def test_invalid_files_are_listed_with_their_reasons(tmp_path: Path, workspace: Path) -> None:
    folder = AgentFolder(tmp_path)
    folder.write("good", agent_text(workspace))
    (tmp_path / "typo.agent.md").write_text(agent_text(workspace, "shedule: daily\n"))
    (tmp_path / "binary.agent.md").write_bytes(b"\xff\xfe---")
    (tmp_path / "Bad Name.agent.md").write_text(agent_text(workspace))
    (tmp_path / "notes.md").write_text("not an agent")  # not an agent file at all
    listing = folder.scan()
    assert [a.name for a in listing.agents] == ["good"]
    reasons = {i.name: i.reason for i in listing.invalid}
    assert set(reasons) == {"typo", "binary", "Bad Name"}
    assert "unknown key shedule" in reasons["typo"]
    assert "cannot be read" in reasons["binary"]
    assert "is not an agent name" in reasons["Bad Name"]


def test_the_template_is_a_valid_agent_once_it_has_a_workspace(
    tmp_path: Path, workspace: Path
) -> None:
    folder = AgentFolder(tmp_path)
    path = folder.create("fresh", str(workspace))
    agent = folder.load(path)
    assert agent.name == "fresh" and agent.schedule is None
    with pytest.raises(FileExistsError):
        folder.create("fresh", str(workspace))


def test_names_that_leave_the_folder_are_refused(tmp_path: Path) -> None:
    for name in ("../up", "a/b", "", ".hidden"):
        with pytest.raises(AgentFileError):
            AgentFolder(tmp_path).path_of(name)


def test_cron_times() -> None:
    assert check_cron(" @daily ") == "@daily"
    with pytest.raises(CronError):
        check_cron("every day")
    start = 1_800_000_000.0  # a multiple of 300: on a five-minute mark
    assert next_after("*/5 * * * *", start) == start + 300
    assert latest_due("*/5 * * * *", start) == start
    assert latest_due("*/5 * * * *", start + 299.5) == start
