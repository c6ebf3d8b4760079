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
        ("[shell]\ntimeout = 3\n", r"\[shell\] timeout: unknown setting"),
        ("[shell]\noutput_limit_bytes = 'big'\n", "expected int, got str"),
        ("[shell]\noutput_limit_bytes = true\n", "expected int, got bool"),
        ("shell = 3\n", "shell: must be a table"),
    ],
)
def test_bad_files_are_errors_naming_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(SettingsError, match=message) as info:
        load_settings(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # A key of a section, of a nested table, and one outside any table.
        ('[shell]\ntimeout_seconds = "soon"\n', "[shell] timeout_seconds: expected float, got str"),
        ("[providers.local]\nbase_url = 3\n", "[providers.local] base_url: expected str, got int"),
        ("verbose = true\n", "verbose: unknown setting (known: shell, files, server,"),
        ("shell = 3\n", "shell: must be a table"),
        ("[providers]\nlocal = 3\n", "[providers] local: must be a table"),
        ("[shell]\ntimeout = 3\n", "[shell] timeout: unknown setting (known: timeout_seconds,"),
        # Choices and ranges, judged after the types.
        ("[autonomy]\nlevel = 1.5\n", "[autonomy] level: must be from 0.0 to 1.0, not 1.5"),
        ("[providers.local]\nkind = 'grpc'\n", "[providers.local] kind: must be one of"),
        # A key TOML must quote is quoted as the file has it.
        ('[providers."my.box"]\nlabel = 1\n', '[providers."my.box"] label: expected str'),
        ('[budget.prices]\n"gpt-4.1" = 3\n', '[budget.prices] "gpt-4.1": must be [input, output]'),
        ("[hooks]\ntimeout_seconds = 0\n", "[hooks] timeout_seconds: expected a positive number"),
        ("[[hooks.Stop]]\nmatcher = 'x'\n", "[[hooks.Stop]] #1 command: expected a non-empty"),
    ],
)
def test_errors_name_the_key_as_the_file_spells_it(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(SettingsError) as info:
        load_settings(path)
    assert str(info.value).startswith(f"{path}: {message}"), str(info.value)


def test_a_workspace_file_is_named_with_its_own_path(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".sparrow").mkdir(parents=True)
    local = workspace / ".sparrow" / "config.toml"
    local.write_text("[files]\nread_limit_bytes = 'lots'\n")
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path / "none.toml", workspace)
    assert str(info.value) == f"{local}: [files] read_limit_bytes: expected int, got str"
