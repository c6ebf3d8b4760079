from pathlib import Path

import pytest

from server.core.settings import Settings, SettingsError, load_settings


def test_missing_files_give_the_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path / "none.toml", tmp_path) == Settings()


def test_workspace_file_overrides_the_global_one(tmp_path: Path) -> None:
    global_file = tmp_path / "config.toml"
    global_file.write_text("[shell]\ntimeout_seconds = 30\noutput_limit_bytes = 1000\n")
    workspace = tmp_path / "ws"
    (workspace / ".sparrow").mkdir(parents=True)
    (workspace / ".sparrow" / "config.toml").write_text("[shell]\ntimeout_seconds = 5\n")
    settings = load_settings(global_file, workspace)
    assert settings.shell.timeout_seconds == 5.0
    assert settings.shell.output_limit_bytes == 1000
    assert settings.files == Settings().files


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[shell\n", "not valid TOML"),
        ("[shell]\ntimeout = 3\n", "unknown setting 'timeout'"),
        ("[shell]\noutput_limit_bytes = 'big'\n", "expected int, got str"),
        ("[shell]\noutput_limit_bytes = true\n", "expected int, got bool"),
        ("shell = 3\n", "'shell' must be a table"),
    ],
)
def test_bad_files_are_errors_naming_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(SettingsError, match=message) as info:
        load_settings(path)
    assert str(path) in str(info.value)
