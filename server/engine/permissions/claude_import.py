"""Import the ``permissions`` of a workspace's Claude Code settings
(``.claude/settings.json``, then ``.claude/settings.local.json``) as rules of
that workspace: ``{"permissions": {"allow": [...], "ask": [...], "deny": [...]}}``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from server.engine.permissions.rulebook import RuleBook
from server.engine.permissions.rules import Rule, RuleError

SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json")


@dataclass
class ImportResult:
    imported: list[Rule] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rule text, why)
    files: list[str] = field(default_factory=list)


def import_claude_rules(book: RuleBook, workspace: Path) -> ImportResult:
    """Raises RuleError when no settings file is there or one cannot be read."""
    result = ImportResult()
    for name in SETTINGS_FILES:
        path = workspace / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RuleError(f"{path}: cannot be read as JSON: {exc}") from exc
        result.files.append(str(path))
        permissions = data.get("permissions") if isinstance(data, dict) else None
        if not isinstance(permissions, dict):
            continue
        for effect in ("deny", "ask", "allow"):
            entries = permissions.get(effect, [])
            if not isinstance(entries, list):
                result.skipped.append((f"{effect}: {entries!r}", "not a list of rules"))
                continue
            for text in entries:
                if not isinstance(text, str):
                    result.skipped.append((repr(text), "not a rule string"))
                    continue
                try:
                    rule = book.create(
                        effect,
                        text,
                        scope="workspace",
                        workspace=str(workspace),
                        source="claude-settings",
                    )
                except RuleError as exc:
                    result.skipped.append((text, str(exc)))
                    continue
                result.imported.append(rule)
    if not result.files:
        raise RuleError(
            f"no Claude Code settings in {workspace} (looked for {', '.join(SETTINGS_FILES)})"
        )
    return result
