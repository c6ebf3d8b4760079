"""The safety layer inside a real run: approvals, the dial turned mid-run,
hard stops, verify_command, hooks with real scripts, and the rollback of a
batch whose change failed half-way."""

from __future__ import annotations

import dataclasses
import json
import stat
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from server.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    GateDecided,
    HookRan,
    Notice,
    RunFinished,
    ToolResult,
    VerifyFinished,
)
from server.core.hook_config import HookConfig, HookSpec
from server.core.paths import Paths
from server.core.settings import (
    BudgetSettings,
    PermissionSettings,
    Settings,
    WorkspaceSettings,
)
from server.engine.approvals import ApprovalAnswer, ApprovalQuestion
from server.engine.bus import EventBus
from server.engine.channel import RunChannel
from server.engine.checkpoints import CheckpointStore
from server.engine.hooks.runner import load_hooks
from server.engine.loop import AgentRun, run_agent
from server.engine.permissions.modes import Contract, Mode
from server.engine.permissions.rulebook import RuleBook
from server.engine.permissions.rules import Scope
from server.engine.store import Store
from server.engine.tools.registry import default_tools
from server.engine.workspace import open_workspace
from server.providers.base import Message, ToolResultMessage, Usage
from server.providers.scripted import ScriptedProvider, ScriptedToolCall, ScriptedTurn

pytestmark = pytest.mark.anyio
SUPERVISED = Contract(Mode.SUPERVISED, 0.2)
AUTONOMOUS = Contract(Mode.AUTONOMOUS, 0.85)


def call(tool: str, **args: str) -> ScriptedToolCall:
    return ScriptedToolCall(tool, dict(args))


class Answers:
    """A person at a surface: answers each question from a list, recording them."""

    def __init__(self, *answers: ApprovalAnswer | None) -> None:
        self.answers = list(answers)
        self.questions: list[ApprovalQuestion] = []

    async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
        self.questions.append(question)
        answer = self.answers.pop(0)
        if answer is None:  # never answers
            await anyio.sleep_forever()
        assert answer is not None
        return answer


@dataclasses.dataclass
class Harness:
    run: AgentRun
    channel: RunChannel
    events: list[Event]
    book: RuleBook

    async def go(self) -> RunFinished:
        await run_agent(self.run, self.channel)
        finished = self.events[-1]
        assert isinstance(finished, RunFinished)
        return finished

    def of(self, kind: type[Event]) -> list[Event]:
        return [e for e in self.events if isinstance(e, kind)]

    def results(self) -> list[ToolResult]:
        return [e for e in self.events if isinstance(e, ToolResult)]


def harness(
    workspace: Path,
    paths: Paths,
    turns: list[ScriptedTurn] | object,
    *,
    contract: Contract = SUPERVISED,
    settings: Settings | None = None,
    approver: Answers | None = None,
    checkpoints: bool = False,
) -> Harness:
    events: list[Event] = []
    store = Store(paths.database)
    book = RuleBook(store, default_tools().names())
    settings = settings or Settings()
    provider = ScriptedProvider(turns)  # type: ignore[arg-type]
    root = open_workspace(workspace)
    run = AgentRun(
        run_id="r",
        session_id="s",
        task="do it",
        workspace=root,
        provider=provider,
        tools=default_tools(),
        settings=settings,
        rulebook=book,
        contract=lambda: contract,
        approver=approver,
        hooks=load_hooks(settings.hooks, root.root),
        checkpoints=CheckpointStore(paths, settings.checkpoints, store) if checkpoints else None,
    )
    return Harness(run, RunChannel("r", EventBus(), [events.append]), events, book)


async def test_allow_once_runs_the_call_and_asks_again_next_time(
    workspace: Path, paths: Paths
) -> None:
    write = call("write_file", path="a.txt", content="1")
    approver = Answers(ApprovalAnswer("allow_once", by="web"), ApprovalAnswer("allow_once"))
    h = harness(
        workspace,
        paths,
        [ScriptedTurn("", (write,)), ScriptedTurn("", (write,)), ScriptedTurn("done")],
        approver=approver,
    )
    assert (await h.go()).status == "completed"
    assert (workspace / "a.txt").read_text() == "1"
    assert len(approver.questions) == 2
    asked = h.of(ApprovalRequested)[0]
    assert isinstance(asked, ApprovalRequested)
    assert (asked.tool, asked.suggested_rule, asked.timeout_seconds) == (
        "write_file",
        "write_file(a.txt)",
        300.0,
    )
    resolved = h.of(ApprovalResolved)[0]
    assert isinstance(resolved, ApprovalResolved) and resolved.by == "web" and resolved.rule == ""
    kinds = [e.type for e in h.events if e.type != "text_delta"]
    i = kinds.index("approval_requested")
    assert kinds[i - 2 : i + 3] == [
        "tool_requested",
        "gate_decided",
        "approval_requested",
        "approval_resolved",
        "tool_result",
    ]


async def test_a_denial_reaches_the_model_with_the_message(workspace: Path, paths: Paths) -> None:
    seen: list[str] = []

    def model(messages: Sequence[Message]) -> ScriptedTurn:
        results = [m for m in messages if isinstance(m, ToolResultMessage)]
        if not results:
            return ScriptedTurn("", (call("write_file", path="a.txt", content="1"),))
        seen.append(results[-1].content)
        return ScriptedTurn("understood")

    approver = Answers(ApprovalAnswer("deny", message="use b.txt instead", by="desktop"))
    h = harness(workspace, paths, model, approver=approver)
    assert (await h.go()).status == "completed"
    assert seen == ["denied by desktop: use b.txt instead"]
    assert not (workspace / "a.txt").exists()


async def test_allow_always_saves_the_shown_rule_and_the_next_call_does_not_ask(
    workspace: Path, paths: Paths
) -> None:
    shell = call("run_shell", command="echo hi && echo there")
    approver = Answers(ApprovalAnswer("allow_always", scope=Scope.WORKSPACE))
    h = harness(
        workspace,
        paths,
        [ScriptedTurn("", (shell,)), ScriptedTurn("", (shell,)), ScriptedTurn("done")],
        approver=approver,
    )
    assert (await h.go()).status == "completed"
    assert len(approver.questions) == 1
    shown = approver.questions[0].suggested_rule
    assert shown == "run_shell(echo hi), run_shell(echo there)"
    saved = [r for r in h.book.rules(workspace=str(workspace)) if r.source == "user"]
    assert ", ".join(r.spec for r in saved) == shown
    assert {r.scope for r in saved} == {Scope.WORKSPACE}
    second = h.of(GateDecided)[1]
    assert isinstance(second, GateDecided)
    assert (second.decision, second.decided_by, second.rule) == (
        "allow",
        "rule",
        "run_shell(echo hi)",
    )
    assert h.book.get(saved[0].id).hits == 1  # type: ignore[union-attr]


async def test_no_answer_in_time_is_a_deny(workspace: Path, paths: Paths) -> None:
    settings = Settings(permissions=PermissionSettings(approval_timeout_seconds=0.05))
    h = harness(
        workspace,
        paths,
        [ScriptedTurn("", (call("write_file", path="a", content=""),)), ScriptedTurn("ok")],
        settings=settings,
        approver=Answers(None),
    )
    assert (await h.go()).status == "completed"
    resolved = h.of(ApprovalResolved)[0]
    assert isinstance(resolved, ApprovalResolved) and resolved.decision == "timeout"
    assert "nobody answered" in h.results()[0].output
    assert not (workspace / "a").exists()


async def test_without_an_approver_what_would_ask_is_denied(workspace: Path, paths: Paths) -> None:
    h = harness(
        workspace,
        paths,
        [ScriptedTurn("", (call("write_file", path="a", content=""),)), ScriptedTurn("ok")],
    )
    assert (await h.go()).status == "completed"
    assert "non-interactive" in h.results()[0].output and not (workspace / "a").exists()


async def test_the_dial_turned_mid_run_counts_from_the_next_call(
    workspace: Path, paths: Paths
) -> None:
    current = [SUPERVISED]

    class TurnsTheDial(Answers):
        async def ask(self, question: ApprovalQuestion) -> ApprovalAnswer:
            current[0] = AUTONOMOUS  # the user turns the dial while the card shows
            return await super().ask(question)

    approver = TurnsTheDial(ApprovalAnswer("allow_once"))
    writes = tuple(call("write_file", path=f"{n}.txt", content="") for n in range(3))
    h = harness(workspace, paths, [ScriptedTurn("", writes), ScriptedTurn("ok")], approver=approver)
    h.run.contract = lambda: current[0]
    assert (await h.go()).status == "completed"
    assert len(approver.questions) == 1
    decided = [e for e in h.of(GateDecided) if isinstance(e, GateDecided)]
    assert [(d.decision, d.band) for d in decided] == [
        ("ask", "Supervised"),
        ("allow", "Autonomous"),
        ("allow", "Autonomous"),
    ]


async def test_trusted_notifies_what_it_allows(workspace: Path, paths: Paths) -> None:
    h = harness(
        workspace,
        paths,
        [ScriptedTurn("", (call("write_file", path="a", content=""),)), ScriptedTurn("ok")],
        contract=Contract(Mode.TRUSTED, 0.5),
    )
    assert (await h.go()).status == "completed"
    notice = h.of(Notice)[0]
    assert isinstance(notice, Notice) and "write_file ran without asking" in notice.text


# --- hard stops ---------------------------------------------------------------


async def test_a_write_outside_the_workspace_is_a_hard_stop(
    workspace: Path, paths: Paths, tmp_path: Path
) -> None:
    target = tmp_path / "outside.txt"
    turns = [
        ScriptedTurn("", (call("write_file", path=str(target), content="x"),)),
        ScriptedTurn("never reached"),
    ]
    finished = await harness(workspace, paths, turns, contract=AUTONOMOUS).go()
    assert finished.status == "stopped"
    assert finished.reason == f"hard stop: write outside the workspace: '{target}'"
    assert not target.exists()


async def test_three_failures_in_a_row_of_one_tool_stop_the_run(
    workspace: Path, paths: Paths
) -> None:
    def model(messages: Sequence[Message]) -> ScriptedTurn:
        return ScriptedTurn("", (call("read_file", path="missing"),))

    h = harness(workspace, paths, model, contract=AUTONOMOUS)
    finished = await h.go()
    assert (finished.status, finished.turns) == ("stopped", 3)
    assert finished.reason == "hard stop: the tool read_file failed 3 times in a row"


async def test_a_success_resets_the_failure_streak(workspace: Path, paths: Paths) -> None:
    (workspace / "there").write_text("x")
    paths_read = ["missing", "missing", "there", "missing", "missing"]
    turns = [ScriptedTurn("", (call("read_file", path=p),)) for p in paths_read]
    h = harness(workspace, paths, [*turns, ScriptedTurn("done")], contract=AUTONOMOUS)
    assert (await h.go()).status == "completed"


@pytest.mark.parametrize(
    ("budget", "reason"),
    [
        (BudgetSettings(max_tokens=1500), "budget exceeded: 2,000 tokens used, the limit is 1,500"),
        (
            BudgetSettings(max_cost_usd=0.001, prices={"script": [1.0, 1.0]}),
            "budget exceeded: $0.0020 spent, the limit is $0.0010",
        ),
        (BudgetSettings(max_cost_usd=1.0), "the cost of the model 'script' is not known"),
    ],
)
async def test_the_budget_is_a_hard_stop(
    budget: BudgetSettings, reason: str, workspace: Path, paths: Paths
) -> None:
    turn = ScriptedTurn(
        "", (call("list_dir", path="."),), Usage(input_tokens=900, output_tokens=100)
    )
    h = harness(
        workspace,
        paths,
        [turn] * 5 + [ScriptedTurn("x")],
        contract=AUTONOMOUS,
        settings=Settings(budget=budget),
    )
    h.run.provider = ScriptedProvider([turn] * 5 + [ScriptedTurn("x")], name="script")
    finished = await h.go()
    assert finished.status == "stopped" and reason in finished.reason


async def test_wall_time_is_a_hard_stop_even_inside_a_tool(workspace: Path, paths: Paths) -> None:
    h = harness(
        workspace,
        paths,
        [ScriptedTurn("", (call("run_shell", command="sleep 30"),)), ScriptedTurn("x")],
        contract=AUTONOMOUS,
        settings=Settings(budget=BudgetSettings(max_wall_seconds=0.5)),
    )
    finished = await h.go()
    assert finished.status == "stopped"
    assert finished.reason == "hard stop: budget exceeded: the run's wall time passed 0.5 s"


# --- verify_command ------------------------------------------------------------


async def test_a_failing_verify_command_goes_back_to_the_model_and_the_run_continues(
    workspace: Path, paths: Paths
) -> None:
    told: list[str] = []

    def model(messages: Sequence[Message]) -> ScriptedTurn:
        last = messages[-1]
        if len(messages) == 1:
            return ScriptedTurn("", (call("write_file", path="code.txt", content="v1"),))
        if isinstance(last, ToolResultMessage) and not (workspace / "fixed").exists():
            return ScriptedTurn("Done.")
        text = getattr(last, "text", "")
        if "verify_command" in text:
            told.append(text)
            return ScriptedTurn("", (call("write_file", path="fixed", content="yes"),))
        return ScriptedTurn("Done now.")

    settings = Settings(
        workspace=WorkspaceSettings(
            verify_command="test -f fixed || (echo 'fixed is missing' >&2; exit 3)"
        )
    )
    h = harness(workspace, paths, model, contract=AUTONOMOUS, settings=settings)
    finished = await h.go()
    assert finished.status == "completed"
    verifies = [e for e in h.of(VerifyFinished) if isinstance(e, VerifyFinished)]
    assert [(v.ok, v.exit_code) for v in verifies] == [(False, 3), (True, 0)]
    assert len(told) == 1 and "fixed is missing" in told[0]


async def test_verify_runs_only_after_a_change(workspace: Path, paths: Paths) -> None:
    settings = Settings(workspace=WorkspaceSettings(verify_command="exit 1"))
    turns = [ScriptedTurn("", (call("list_dir", path="."),)), ScriptedTurn("done")]
    h = harness(workspace, paths, turns, contract=AUTONOMOUS, settings=settings)
    assert (await h.go()).status == "completed" and not h.of(VerifyFinished)


# --- hooks with real scripts ----------------------------------------------------


def script(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


async def test_a_blocking_pre_tool_use_hook_vetoes_the_call(
    workspace: Path, paths: Paths, tmp_path: Path
) -> None:
    veto = script(tmp_path, "veto.sh", "echo 'no writes on Fridays' >&2\nexit 2\n")
    hooks = HookConfig(entries=(HookSpec("PreToolUse", veto, matcher="write_file"),))
    seen: list[str] = []

    def model(messages: Sequence[Message]) -> ScriptedTurn:
        results = [m for m in messages if isinstance(m, ToolResultMessage)]
        if not results:
            return ScriptedTurn(
                "",
                (call("write_file", path="a", content=""), call("list_dir", path=".")),
            )
        seen.extend(r.content for r in results)
        return ScriptedTurn("ok")

    h = harness(workspace, paths, model, contract=AUTONOMOUS, settings=Settings(hooks=hooks))
    assert (await h.go()).status == "completed"
    assert seen[0] == "blocked by a PreToolUse hook: no writes on Fridays"
    assert not (workspace / "a").exists()
    assert not seen[1].startswith("blocked")  # the matcher names write_file only
    ran = [e for e in h.of(HookRan) if isinstance(e, HookRan)]
    assert [(r.hook_event, r.exit_code, r.blocked) for r in ran] == [("PreToolUse", 2, True)]


async def test_a_json_block_decision_vetoes_too(
    workspace: Path, paths: Paths, tmp_path: Path
) -> None:
    body = 'echo \'{"decision": "block", "reason": "use edit_file"}\'\n'
    hooks = HookConfig(entries=(HookSpec("PreToolUse", script(tmp_path, "j.sh", body)),))
    turns = [ScriptedTurn("", (call("write_file", path="a", content=""),)), ScriptedTurn("ok")]
    h = harness(workspace, paths, turns, contract=AUTONOMOUS, settings=Settings(hooks=hooks))
    assert (await h.go()).status == "completed"
    assert h.results()[0].output == "blocked by a PreToolUse hook: use edit_file"


async def test_hook_payloads_carry_the_documented_fields(
    workspace: Path, paths: Paths, tmp_path: Path
) -> None:
    log = tmp_path / "payloads.jsonl"
    record = script(tmp_path, "record.sh", f"cat >> {log}\necho >> {log}\n")
    events = (
        "SessionStart",
        "PreToolUse",
        "PostToolUse",
        "PreCheckpoint",
        "PostCheckpoint",
        "Stop",
        "Notification",
    )
    hooks = HookConfig(entries=tuple(HookSpec(e, record) for e in events))
    turns = [ScriptedTurn("", (call("write_file", path="a", content="1"),)), ScriptedTurn("ok")]
    h = harness(
        workspace,
        paths,
        turns,
        contract=Contract(Mode.TRUSTED, 0.5),
        settings=Settings(hooks=hooks),
        checkpoints=True,
    )
    assert (await h.go()).status == "completed"
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    payloads = {p["hook_event_name"]: p for p in map(json.loads, lines)}
    common = {"hook_event_name", "session_id", "run_id", "transcript_path", "cwd", "workspace"}
    expected = {
        "SessionStart": {"task", "model", "source"},
        "PreToolUse": {"tool_name", "tool_input", "tool_use_id", "risk"},
        "PostToolUse": {"tool_name", "tool_input", "tool_use_id", "risk", "tool_response"},
        "PreCheckpoint": {"tool_name", "turn"},
        "PostCheckpoint": {"tool_name", "turn", "checkpoint_id", "files_changed"},
        "Stop": {"status", "reason"},
        "Notification": {"message"},
    }
    assert set(payloads) == set(expected)
    for name, fields in expected.items():
        assert set(payloads[name]) == common | fields, name
    assert payloads["PreToolUse"]["tool_input"] == {"path": "a", "content": "1"}
    assert payloads["PostToolUse"]["tool_response"] == {"ok": True, "output": "a: created, 1 B"}
    assert payloads["Stop"]["status"] == "completed"
    assert payloads["SessionStart"]["source"] == "startup"
    assert payloads["PreToolUse"]["cwd"] == str(workspace)


# --- checkpoint discipline ------------------------------------------------------


async def test_a_change_that_fails_half_way_rolls_its_batch_back(
    workspace: Path, paths: Paths
) -> None:
    (workspace / "keep.txt").write_text("before")
    batch = (
        call("write_file", path="keep.txt", content="changed"),
        call("write_file", path="keep.txt/inner", content="x"),  # keep.txt is a file: OSError
        call("write_file", path="later.txt", content="x"),
    )
    h = harness(
        workspace,
        paths,
        [ScriptedTurn("", batch), ScriptedTurn("ok")],
        contract=AUTONOMOUS,
        checkpoints=True,
    )
    assert (await h.go()).status == "completed"
    results = h.results()
    assert [r.ok for r in results] == [True, False, False]
    assert "the batch was rolled back to checkpoint" in results[1].output
    assert results[2].output.startswith("not run: an earlier call of this batch failed")
    assert (workspace / "keep.txt").read_text() == "before"
    assert not (workspace / "later.txt").exists()


async def test_a_verify_command_the_gate_would_ask_for_is_not_run_unasked(
    workspace: Path, paths: Paths
) -> None:
    # Supervised: a workspace's command is a shell command like any other.
    settings = Settings(workspace=WorkspaceSettings(verify_command="touch verified"))
    turns = [ScriptedTurn("", (call("write_file", path="a", content=""),)), ScriptedTurn("done")]
    approver = Answers(ApprovalAnswer("allow_once"))
    h = harness(workspace, paths, turns, settings=settings, approver=approver)
    assert (await h.go()).status == "completed"
    assert not (workspace / "verified").exists() and not h.of(VerifyFinished)
    notice = h.of(Notice)[-1]
    assert isinstance(notice, Notice) and "allow it with the rule run_shell(touch verified)" in (
        notice.text
    )
    # With that rule, it runs.
    h.book.create("allow", "run_shell(touch verified)")
    again = harness(
        workspace, paths, turns, settings=settings, approver=Answers(ApprovalAnswer("allow_once"))
    )
    assert (await again.go()).status == "completed"
    assert (workspace / "verified").exists()
