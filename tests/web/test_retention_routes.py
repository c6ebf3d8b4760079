"""GET /api/settings/sessions: the sessions' age limit, read from config.toml
as it is when asked, with the file it comes from."""

from __future__ import annotations

from starlette.testclient import TestClient

from server.core.paths import Paths
from tests.conftest import AUTONOMOUS_CONFIG


def test_no_limit_by_default_and_where_to_set_one(client: TestClient, paths: Paths) -> None:
    answer = client.get("/api/settings/sessions")
    assert answer.status_code == 200
    assert answer.json() == {"keep_days": 0, "config_file": str(paths.config_file)}


def test_a_limit_set_in_config_toml_is_shown(client: TestClient, paths: Paths) -> None:
    paths.config_file.write_text(AUTONOMOUS_CONFIG + "[sessions]\nkeep_days = 30\n")
    assert client.get("/api/settings/sessions").json()["keep_days"] == 30


def test_a_bad_limit_is_a_clear_error(client: TestClient, paths: Paths) -> None:
    paths.config_file.write_text(AUTONOMOUS_CONFIG + "[sessions]\nkeep_days = -3\n")
    answer = client.get("/api/settings/sessions")
    assert answer.status_code == 400
    assert "keep_days" in answer.json()["error"]
