import json
from pathlib import Path

import pytest

from server.core.hook_config import HookConfig, HookConfigError, HookSpec
from server.engine.hooks import SkippedHook, load_claude_hooks, load_hooks

SETTINGS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": "./guard.sh", "timeout": 5},
                    {"type": "prompt", "prompt": "Is this safe?"},
                ],
            },
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt"}]},
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "setup"}]},
            {"matcher": "resume", "hooks": [{"type": "command", "command": "reload"}]},
        ],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "log"}]}],
        "SessionEnd": [],
    },
}


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_shared_events_become_specs_and_the_rest_is_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path / "settings.json", SETTINGS)
    specs, skipped = load_claude_hooks(path)
    src = str(path)
    assert specs == [
        HookSpec("PreToolUse", "./guard.sh", "Bash", 5.0, src),
        HookSpec("PreToolUse", "fmt", "Edit|Write", None, src),
        HookSpec("Stop", "notify-send done", "", None, src),
        HookSpec("SessionStart", "setup", "startup", None, src),
    ]
    assert [(s.event, s.reason) for s in skipped] == [
        ("PreToolUse", "hook type 'prompt' is not supported"),
        ("SessionStart", "matcher 'resume': Sparrow sessions only start"),
        ("UserPromptSubmit", "Sparrow has no such event"),
        ("SessionEnd", "Sparrow has no such event"),
    ]
    assert str(skipped[2]) == f"{src}: UserPromptSubmit: Sparrow has no such event"


def test_claude_matchers_select_our_tools(tmp_path: Path) -> None:
    path = _write(tmp_path / "settings.json", SETTINGS)
    hooks = load_hooks(HookConfig(claude_settings=(str(path),)), tmp_path)
    assert [s.command for s in hooks.matching("PreToolUse", "run_shell")] == ["./guard.sh"]
    assert [s.command for s in hooks.matching("PreToolUse", "write_file")] == ["fmt"]
    assert hooks.matching("PreToolUse", "read_file") == []


def test_a_file_without_hooks_has_none(tmp_path: Path) -> None:
    assert load_claude_hooks(_write(tmp_path / "s.json", {"model": "x"})) == ([], [])


def test_an_invalid_regex_matcher_is_skipped(tmp_path: Path) -> None:
    data = {"hooks": {"PreToolUse": [{"matcher": "(Edit", "hooks": [{"command": "x"}]}]}}
    specs, skipped = load_claude_hooks(_write(tmp_path / "s.json", data))
    assert specs == [] and "not a valid regular expression" in skipped[0].reason


def test_bad_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{ nope")
    with pytest.raises(HookConfigError, match="not valid JSON") as info:
        load_claude_hooks(path)
    assert str(path) in str(info.value)


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "elsewhere" / "settings.json"
    with pytest.raises(HookConfigError, match="not found") as info:
        load_hooks(HookConfig(claude_settings=(str(missing),)), tmp_path)
    assert str(missing) in str(info.value)


def test_a_workspace_without_the_listed_file_skips_it(tmp_path: Path) -> None:
    hooks = load_hooks(HookConfig(claude_settings=(".claude/settings.json",)), tmp_path)
    assert hooks.matching("PreToolUse", "run_shell") == []
    assert [s.reason for s in hooks.skipped] == ["no such file in this workspace"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected a JSON object"),
        ({"hooks": []}, "'hooks' must be an object"),
        ({"hooks": {"Stop": {}}}, r"hooks\.Stop: expected a list"),
        ({"hooks": {"Stop": ["x"]}}, r"hooks\.Stop\[0\]: expected an object"),
        ({"hooks": {"Stop": [{"hooks": "x"}]}}, "'hooks' a list"),
        ({"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}, "'command' must be"),
        (
            {"hooks": {"Stop": [{"hooks": [{"command": "x", "timeout": "5"}]}]}},
            "'timeout' must be a positive number",
        ),
    ],
)
def test_malformed_sections_are_errors(tmp_path: Path, data: object, message: str) -> None:
    path = _write(tmp_path / "settings.json", data)
    with pytest.raises(HookConfigError, match=message) as info:
        load_claude_hooks(path)
    assert str(path) in str(info.value)


def test_load_hooks_puts_our_entries_first_and_resolves_against_the_workspace(
    tmp_path: Path,
) -> None:
    _write(tmp_path / ".claude" / "settings.json", SETTINGS)
    ours = HookSpec("Stop", "ours")
    hooks = load_hooks(
        HookConfig(timeout_seconds=7, claude_settings=(".claude/settings.json",), entries=(ours,)),
        tmp_path,
    )
    assert [s.command for s in hooks.matching("Stop", None)] == ["ours", "notify-send done"]
    assert hooks.timeout_seconds == 7
    assert all(isinstance(s, SkippedHook) for s in hooks.skipped) and len(hooks.skipped) == 4
