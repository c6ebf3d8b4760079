"""``sparrow autonomy``: the shared mode and dial, read and set in the real store."""

from __future__ import annotations

import json

from tests.cli.test_cli import sparrow


def current() -> dict[str, object]:
    result: dict[str, object] = json.loads(sparrow("autonomy", "--json").stdout)
    return result


def test_show_starts_from_the_settings() -> None:
    # tests/conftest.py configures Autonomous at 0.85.
    shown = current()
    assert (shown["mode"], shown["level"], shown["band"]) == ("autonomous", 0.85, "Autonomous")
    bands = shown["bands"]
    assert isinstance(bands, list)
    assert [b["name"] for b in bands] == ["Supervised", "Trusted", "Autonomous"]
    text = sparrow("autonomy").stdout
    assert "mode:  autonomous" in text and "level: 0.85 (Autonomous)" in text
    assert "Supervised 0.00 to 0.33" in text and "Trusted 0.34 to 0.66" in text


def test_set_level_and_mode_are_remembered() -> None:
    assert "mode:  trusted" in sparrow("autonomy", "0.5").stdout
    assert (current()["mode"], current()["level"]) == ("trusted", 0.5)
    # A band's mode chosen from outside its band moves the dial into it.
    sparrow("autonomy", "--mode", "supervised")
    assert (current()["mode"], current()["level"]) == ("supervised", 0.2)
    # Modes outside the bands keep the dial for later.
    both = json.loads(sparrow("autonomy", "0.4", "--mode", "read-only", "--json").stdout)
    assert (both["mode"], both["level"], both["band"]) == ("read-only", 0.4, "Trusted")
    assert current()["mode"] == "read-only"


def test_invalid_values_exit_2_and_change_nothing() -> None:
    for args, message in (
        (("1.5",), "from 0.0 to 1.0"),
        (("nan",), "must be a number"),
        (("--mode", "yolo"), "unknown permission mode 'yolo'"),
    ):
        result = sparrow("autonomy", *args, check=False)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    assert current()["mode"] == "autonomous"
