"""Every setting and tool is documented in the README, and the CLI's commands too."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from server.cli.parser import build_parser
from server.core.settings import Settings
from server.engine.tools.registry import default_tools

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def setting_names(obj: object, prefix: str = "") -> list[str]:
    names = []
    for field in dataclasses.fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, field.name)
        if dataclasses.is_dataclass(value):
            names += setting_names(value, f"{prefix}{field.name}.")
        else:
            names.append(prefix + field.name)
    return names


def test_every_setting_is_in_the_readme() -> None:
    names = setting_names(Settings())
    assert len(names) > 10
    missing = []
    for name in names:
        # `a.b.warning` may be written `a.b.warning` / `.critical`.
        parent, _, last = name.rpartition(".")
        if f"`{name}`" not in README and not (
            parent and f"`{parent}." in README and f"`.{last}`" in README
        ):
            missing.append(name)
    assert missing == []


def test_every_tool_is_in_the_readme_with_its_risk() -> None:
    tools = default_tools()
    for name in tools.names():
        tool = tools.get(name)
        assert tool is not None
        assert f"| `{name}` |" in README and tool.risk.value in README


def test_every_command_is_in_the_readme() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert commands
    for command in commands:
        assert f"sparrow {command}" in README, command
