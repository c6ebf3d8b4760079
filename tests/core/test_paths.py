from pathlib import Path

from server.core.paths import resolve_paths


def test_sparrow_home_relocates_everything(tmp_path: Path) -> None:
    paths = resolve_paths({"SPARROW_HOME": str(tmp_path / "h")})
    for folder in (paths.config, paths.state, paths.data, paths.cache):
        assert folder.is_relative_to(tmp_path / "h")
    assert paths.database == tmp_path / "h" / "state" / "sessions.db"
    assert paths.transcript("r-1") == tmp_path / "h" / "state" / "transcripts" / "r-1.jsonl"
    assert paths.config_file == tmp_path / "h" / "config" / "config.toml"


def test_without_sparrow_home_uses_platform_folders(tmp_path: Path) -> None:
    paths = resolve_paths({})
    assert "sparrow" in str(paths.config).lower()
    assert "sparrow" in str(paths.state).lower()
    assert not paths.state.is_relative_to(tmp_path)


def test_ensure_creates_the_folders(tmp_path: Path) -> None:
    paths = resolve_paths({"SPARROW_HOME": str(tmp_path / "h")}).ensure()
    assert paths.transcripts.is_dir() and paths.config.is_dir() and paths.data.is_dir()
