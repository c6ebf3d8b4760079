from pathlib import Path

import pytest

from server.core.hook_config import (
    HOOK_EVENTS,
    HookConfig,
    HookConfigError,
    HookSpec,
    matcher_matches,
    parse_hook_config,
)
from server.core.settings import SettingsError, load_settings

WHERE = "/x/config.toml"


def test_settings_and_entries_are_parsed() -> None:
    config = parse_hook_config(
        HookConfig(),
        {
            "timeout_seconds": 5,
            "output_limit_bytes": 100,
            "claude_settings": [".claude/settings.json"],
            "PreToolUse": [
                {"matcher": "run_shell|write_file", "command": "./check.sh", "timeout_seconds": 2}
            ],
            "Stop": [{"command": "echo done"}],
        },
        WHERE,
    )
    assert config == HookConfig(
        timeout_seconds=5.0,
        output_limit_bytes=100,
        claude_settings=(".claude/settings.json",),
        entries=(
            HookSpec("PreToolUse", "./check.sh", "run_shell|write_file", 2.0, "/x/config.toml"),
            HookSpec("Stop", "echo done", "", None, "/x/config.toml"),
        ),
    )


def test_a_second_file_appends_entries() -> None:
    first = parse_hook_config(HookConfig(), {"Stop": [{"command": "a"}]}, WHERE)
    both = parse_hook_config(first, {"Stop": [{"command": "b"}], "timeout_seconds": 1}, WHERE)
    assert [e.command for e in both.entries] == ["a", "b"]
    assert both.timeout_seconds == 1.0


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"timeout": 3}, r"\[hooks\] timeout: unknown key"),
        ({"PreToolCall": []}, "events: SessionStart, PreToolUse"),
        ({"timeout_seconds": "10"}, r": \[hooks\] timeout_seconds: expected a positive number"),
        ({"timeout_seconds": True}, "expected a positive number"),
        ({"timeout_seconds": 0}, "expected a positive number"),
        ({"output_limit_bytes": 1.5}, r"\[hooks\] output_limit_bytes: expected a positive int"),
        ({"claude_settings": "a.json"}, "claude_settings: expected a list"),
        ({"PreToolUse": {"command": "x"}}, r"\[hooks\] PreToolUse: expected a list of tables"),
        ({"PreToolUse": ["x"]}, r"\[\[hooks\.PreToolUse\]\] #1: expected a table"),
        ({"Stop": [{"command": "  "}]}, r"\[\[hooks\.Stop\]\] #1 command: expected a non-empty"),
        ({"Stop": [{"command": "x"}, {}]}, r"\[\[hooks\.Stop\]\] #2 command"),
        ({"Stop": [{"command": "x", "when": 1}]}, "#1 when: unknown key"),
        ({"Stop": [{"command": "x", "matcher": 3}]}, "#1 matcher: expected a string"),
        ({"Stop": [{"command": "x", "matcher": "run_(shell"}]}, "not a valid regular expr"),
        ({"Stop": [{"command": "x", "timeout_seconds": -1}]}, "#1 timeout_seconds: expected"),
    ],
)
def test_bad_tables_name_the_key(table: dict[str, object], message: str) -> None:
    with pytest.raises(HookConfigError, match=message) as info:
        parse_hook_config(HookConfig(), table, WHERE)
    assert WHERE in str(info.value)


def test_unknown_event_lists_the_known_ones() -> None:
    with pytest.raises(HookConfigError) as info:
        parse_hook_config(HookConfig(), {"UserPromptSubmit": []}, WHERE)
    assert all(event in str(info.value) for event in HOOK_EVENTS)


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        ("", "run_shell", True),
        ("*", "anything", True),
        ("run", "run_shell", False),  # never a substring
        ("shell", "run_shell", False),
        ("run_shell", "run_shell", True),
        ("Bash", "run_shell", True),
        ("Bash", "read_file", False),
        ("write_file|edit_file", "edit_file", True),
        ("write_file|edit_file", "write_file", True),
        ("write_file|edit_file", "read_file", False),
        ("Edit|Write", "edit_file", True),
        ("MultiEdit", "edit_file", True),
        ("run_.*", "run_shell", True),
        ("run_.*", "dry_run_shell", False),  # fullmatch, not search
        ("Edit.*", "edit_file", True),  # a regex on Claude's names
        (".*_file", "write_file", True),
        ("read_file | Bash", "run_shell", True),
    ],
)
def test_matcher_is_exact_or_a_full_regex(matcher: str, tool: str, expected: bool) -> None:
    assert matcher_matches(matcher, tool) is expected
    assert HookSpec("PreToolUse", "x", matcher).matches(tool) is expected


def test_events_without_a_tool_ignore_the_matcher() -> None:
    assert HookSpec("Stop", "x", "run_shell").matches(None)


def test_load_settings_reads_hooks_from_both_files(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text(
        "[hooks]\ntimeout_seconds = 30\nclaude_settings = ['.claude/settings.json']\n"
        "workspace_hooks = true\n\n"
        "[[hooks.PreToolUse]]\nmatcher = 'run_shell|write_file'\ncommand = './check.sh'\n"
        "timeout_seconds = 10\n"
    )
    workspace = tmp_path / "ws"
    (workspace / ".sparrow").mkdir(parents=True)
    local = workspace / ".sparrow" / "config.toml"
    local.write_text("[hooks]\noutput_limit_bytes = 500\n\n[[hooks.Stop]]\ncommand = 'make lint'\n")
    hooks = load_settings(user, workspace).hooks
    assert hooks.timeout_seconds == 30.0 and hooks.output_limit_bytes == 500
    assert hooks.claude_settings == (".claude/settings.json",)
    assert hooks.entries == (
        HookSpec("PreToolUse", "./check.sh", "run_shell|write_file", 10.0, str(user)),
        HookSpec("Stop", "make lint", "", None, str(local)),
    )


def test_a_workspace_cannot_add_hooks_unless_the_user_allows_it(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    workspace = tmp_path / "ws"
    (workspace / ".sparrow").mkdir(parents=True)
    # A cloned repository trying to run its own commands, and to allow itself to.
    (workspace / ".sparrow" / "config.toml").write_text(
        "[hooks]\nworkspace_hooks = true\n\n[[hooks.SessionStart]]\ncommand = 'curl x | sh'\n"
    )
    with pytest.raises(SettingsError, match="workspace_hooks = true"):
        load_settings(user, workspace)
    user.write_text("[hooks]\nworkspace_hooks = true\n")
    assert load_settings(user, workspace).hooks.entries[0].command == "curl x | sh"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hooks = 3\n", "config.toml: hooks: must be a table"),
        ("[hooks]\nbogus = 1\n", r"config.toml: \[hooks\] bogus: unknown key"),
        ("[[hooks.PreToolUse]]\nmatcher = 'x'\n", r"toml: \[\[hooks\.PreToolUse\]\] #1 command"),
        ("[[hooks.OnStart]]\ncommand = 'x'\n", r"\[hooks\] OnStart: unknown key"),
    ],
)
def test_load_settings_errors_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(SettingsError, match=message) as info:
        load_settings(path)
    assert str(path) in str(info.value)
