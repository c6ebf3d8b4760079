"""The runs' model for the tray and the notices, and the tray's menu as plain data."""

from __future__ import annotations

from desktop.activity import ActivityModel, approval_notice
from desktop.alerts import AlertModel
from desktop.tray_menu import icon_state, menu_items, tooltip


def started(model: ActivityModel, run_id: str = "r-1", task: str = "tidy the notes") -> None:
    assert not model.handle({"type": "run_started", "run_id": run_id, "task": task}).notices


def asked(model: ActivityModel, run_id: str = "r-1", call_id: str = "c-1") -> list[str]:
    changes = model.handle(
        {
            "type": "approval_requested",
            "run_id": run_id,
            "call_id": call_id,
            "tool": "write_file",
            "reason": "Supervised · Mutating: Ask",
            "expires_at": 1300.0,
        }
    )
    return [n.key for n in changes.notices]


def test_the_four_states() -> None:
    model = ActivityModel()
    assert model.activity.state == "idle"
    started(model)
    assert model.activity.state == "running"
    model.handle(
        {"type": "context_updated", "run_id": "r-1", "ratio": 0.85, "tokens": 850, "window": 1000}
    )
    assert model.activity.state == "warning"
    assert asked(model) == ["approval:r-1:c-1"]
    assert model.activity.state == "approval"
    changes = model.handle(
        {
            "type": "approval_resolved",
            "run_id": "r-1",
            "call_id": "c-1",
            "decision": "allow_once",
            "by": "web",
        }
    )
    assert changes.withdrawn == ["approval:r-1:c-1"]
    assert model.activity.state == "warning"
    model.handle(
        {
            "type": "run_finished",
            "run_id": "r-1",
            "status": "completed",
            "reason": "the model gave its final answer",
            "turns": 2,
        }
    )
    assert model.activity.state == "idle"


def test_an_approval_notice_has_allow_and_deny_and_says_the_task() -> None:
    model = ActivityModel()
    started(model)
    event = {
        "type": "approval_requested",
        "run_id": "r-1",
        "call_id": "c-1",
        "tool": "write_file",
        "reason": "Supervised · Mutating: Ask",
        "expires_at": 1300.0,
    }
    notice = approval_notice(event, "tidy the notes", now=1000.0)
    assert notice.title == "Sparrow asks: allow write_file?"
    assert notice.body == (
        "“tidy the notes”: Supervised · Mutating: Ask. Without an answer in 5 min it is denied."
    )
    assert notice.actions == (("allow", "Allow"), ("deny", "Deny"))
    assert (notice.urgent, notice.run_id) == (True, "r-1")


def test_the_context_warning_is_said_once_per_run() -> None:
    model = ActivityModel(warning_ratio=0.8)
    started(model)
    below = model.handle({"type": "context_updated", "run_id": "r-1", "ratio": 0.5})
    assert below.notices == []
    first = model.handle(
        {
            "type": "context_updated",
            "run_id": "r-1",
            "ratio": 0.81,
            "tokens": 81_000,
            "window": 100_000,
        }
    )
    assert [n.title for n in first.notices] == ["Context warning: tidy the notes"]
    assert "81% of its context window (81,000 of 100,000 tokens)" in first.notices[0].body
    again = model.handle({"type": "context_updated", "run_id": "r-1", "ratio": 0.9})
    assert again.notices == []
    end = {"type": "run_finished", "run_id": "r-1", "status": "completed", "reason": "done"}
    assert model.handle(end).withdrawn == ["context:r-1"]


def test_finished_failed_and_hard_stop_are_notified_a_cancel_is_not() -> None:
    model = ActivityModel()
    for run_id in ("a", "b", "c", "d"):
        started(model, run_id, f"task {run_id}")
    model.handle(
        {
            "type": "message_added",
            "run_id": "a",
            "message": {"role": "assistant", "text": "All tidy: 3 notes merged."},
        }
    )
    ends = {
        "a": ("completed", "the model gave its final answer"),
        "b": ("failed", "model error: 500"),
        "c": ("stopped", "hard stop: budget exceeded: 10 tokens"),
        "d": ("cancelled", "cancelled by the user"),
    }
    said = {}
    for run_id, (status, reason) in ends.items():
        changes = model.handle(
            {
                "type": "run_finished",
                "run_id": run_id,
                "status": status,
                "reason": reason,
                "turns": 1,
            }
        )
        said[run_id] = [(n.title, n.body, n.urgent) for n in changes.notices]
    assert said == {
        "a": [("Run finished: task a", "All tidy: 3 notes merged.", False)],
        "b": [("Run failed: task b", "model error: 500 (1 turn)", False)],
        "c": [("Hard stop: task c", "hard stop: budget exceeded: 10 tokens (1 turn)", True)],
        "d": [],
    }


def test_a_run_that_ends_withdraws_its_waiting_approvals() -> None:
    model = ActivityModel()
    started(model)
    asked(model)
    changes = model.handle(
        {
            "type": "run_finished",
            "run_id": "r-1",
            "status": "cancelled",
            "reason": "stopped by the emergency stop",
        }
    )
    assert changes.withdrawn == ["approval:r-1:c-1"]
    assert model.activity.approvals == ()


def test_the_menu_lists_each_run_with_stop_and_the_approvals() -> None:
    model = ActivityModel()
    started(model, "r-1", "tidy the notes")
    started(model, "r-2", "write the release notes for version 2.0 of the engine, all of it")
    asked(model, "r-2", "c-9")
    items = [(i.text, i.action, i.enabled) for i in menu_items(model.activity)]
    assert items == [
        ("Open window", "open", True),
        ("Monitor", "monitor", True),
        ("", "", True),
        ("Answer: write_file in “write the release notes for ver…”…", "open:r-2", True),
        ("Stop “tidy the notes”", "stop:r-1", True),
        ("Stop “write the release notes for version 2.0 of the…” (asks)", "stop:r-2", True),
        ("", "", True),
        ("Pause all (emergency stop)", "pause_all", True),
        ("Quit", "quit", True),
    ]
    assert tooltip(model.activity) == "Sparrow: 2 runs going, 1 approval waiting"


def test_while_quitting_the_menu_says_so_and_stops_nothing_more() -> None:
    model = ActivityModel()
    started(model)
    model.set_quitting("quitting: waiting for 1 run to stop (“tidy the notes”)")
    items = {i.action: (i.text, i.enabled) for i in menu_items(model.activity)}
    assert items["quit"] == ("Quitting…", False)
    assert items["stop:r-1"][1] is False and items["pause_all"][1] is False
    assert tooltip(model.activity) == (
        "Sparrow: quitting: waiting for 1 run to stop (“tidy the notes”)"
    )


def test_a_monitored_session_at_warning_shows_the_warning_icon_unless_worse() -> None:
    monitor = AlertModel()
    monitor.connected()
    monitor.handle({"type": "monitor_sessions", "sessions": [{"key": "k", "level": "warning"}]})
    model = ActivityModel()
    assert icon_state(model.activity, monitor.tray) == "warning"
    started(model)
    asked(model)
    assert icon_state(model.activity, monitor.tray) == "approval"


def ended(model: ActivityModel, run_id: str = "r-1", status: str = "completed") -> list[str]:
    event = {"type": "run_finished", "run_id": run_id, "status": status, "reason": "done"}
    return [n.key for n in model.handle(event).notices]


def test_a_reconnection_notices_what_was_missed_and_withdraws_what_is_over() -> None:
    model = ActivityModel()
    started(model, "r-1", "answered meanwhile")
    started(model, "r-2", "ended meanwhile")
    asked(model, "r-1", "c-1")
    runs = [
        {"id": "r-1", "task": "answered meanwhile", "live": True, "status": "running"},
        {
            "id": "r-2",
            "task": "ended meanwhile",
            "live": False,
            "status": "failed",
            "reason": "model error: 500",
            "turns": 2,
        },
        {"id": "r-3", "task": "started meanwhile", "live": True, "status": "running"},
        {"id": "r-0", "task": "an old run", "live": False, "status": "completed"},
    ]
    missed = {"run_id": "r-3", "call_id": "c-7", "tool": "run_shell", "reason": "Exec: Ask"}
    changes = model.resync(runs, {"r-1": [], "r-3": [missed]})
    assert changes.withdrawn == ["approval:r-1:c-1"]
    assert [(n.key, n.title) for n in changes.notices] == [
        ("run:r-2", "Run failed: ended meanwhile"),
        ("approval:r-3:c-7", "Sparrow asks: allow run_shell?"),
    ]
    assert "“started meanwhile”: Exec: Ask." in changes.notices[1].body
    assert [r.run_id for r in model.activity.runs] == ["r-1", "r-3"]
    assert [(w.run_id, w.call_id) for w in model.activity.approvals] == [("r-3", "c-7")]
    # The same state read again, or the missed events arriving late: nothing twice.
    assert model.resync(runs, {"r-1": [], "r-3": [missed]}).notices == []
    assert asked(model, "r-3", "c-7") == []
    assert ended(model, "r-2", "failed") == []


def test_a_notice_of_the_run_in_front_of_the_user_is_not_sent() -> None:
    from desktop.activity import View

    model = ActivityModel()
    started(model, "r-1")
    started(model, "r-2")
    model.set_view(View("r-1", visible=True, focused=True))
    assert asked(model, "r-1") == []  # they see it in the window
    assert model.activity.state == "approval"  # the tray (and its menu) still says so
    assert asked(model, "r-2", "c-2") == ["approval:r-2:c-2"]  # another run: noticed
    # The window loses the focus with the approval still waiting: noticed now, once.
    left = model.set_view(View("r-1", visible=True, focused=False))
    assert [n.key for n in left.notices] == ["approval:r-1:c-1"]
    assert model.set_view(View("r-1", visible=True, focused=True)).notices == []
    assert model.set_view(View("r-1", visible=False, focused=False)).notices == []
    # A run's end: not sent when in front, sent when the window is hidden or elsewhere.
    model.set_view(View("r-1", visible=True, focused=True))
    assert ended(model, "r-1") == []
    model.set_view(View("r-2", visible=True, focused=False))
    assert ended(model, "r-2") == ["run:r-2"]


def test_the_window_in_front_on_another_view_or_minimised_hides_nothing() -> None:
    from desktop.activity import View

    for view in (
        View("", visible=True, focused=True),  # the Monitor, Settings…
        View("r-1", visible=False, focused=True),  # minimised: focus is stale
        View("r-9", visible=True, focused=True),
    ):
        model = ActivityModel()
        model.set_view(view)
        started(model)
        assert asked(model) == ["approval:r-1:c-1"]
        assert ended(model) == ["run:r-1"]
