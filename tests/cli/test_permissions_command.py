"""``sparrow permissions`` as a user runs it: rules saved in the real store
(under the test's SPARROW_HOME), listed, removed and imported."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import ndjson, sparrow

RULE_KEYS = {
    "id", "effect", "spec", "tool", "pattern", "scope", "workspace", "session_id",
    "provider", "surface", "source", "hits", "last_used_at", "created_at",
}  # fmt: skip


def listed(workspace: Path) -> list[dict[str, object]]:
    return ndjson(sparrow("permissions", "list", "-w", str(workspace), "--json").stdout)


def test_add_list_and_remove_rules(workspace: Path, tmp_path: Path) -> None:
    saved = sparrow("permissions", "allow", "write_file(src/**)", "-w", str(workspace)).stdout
    assert "allow write_file(src/**)" in saved and f"workspace {workspace}" in saved
    sparrow("permissions", "deny", "Bash(rm:*)", "--scope", "global", "--surface", "cli")
    sparrow("permissions", "ask", "fetch_url(domain:example.com)", "--provider", "demo",
            "-w", str(workspace))  # fmt: skip

    rules = listed(workspace)
    assert all(set(rule) == RULE_KEYS for rule in rules)
    assert any(r["source"] == "default" and r["spec"] == "*(.env)" for r in rules)
    mine = {r["spec"]: r for r in rules if r["source"] == "user"}
    assert mine["write_file(src/**)"]["scope"] == "workspace"
    assert mine["write_file(src/**)"]["workspace"] == str(workspace)
    assert mine["Bash(rm:*)"]["scope"] == "global" and mine["Bash(rm:*)"]["surface"] == "cli"
    assert mine["fetch_url(domain:example.com)"]["provider"] == "demo"

    # Another workspace sees the global rule only.
    other = tmp_path / "other"
    other.mkdir()
    assert {r["spec"] for r in listed(other) if r["source"] == "user"} == {"Bash(rm:*)"}

    table = sparrow("permissions", "list", "--workspace", str(workspace)).stdout
    rule_id = str(mine["write_file(src/**)"]["id"])
    assert "EFFECT" in table and rule_id in table and "deny   *(.git)" in table

    assert f"removed rule {rule_id}" in sparrow("permissions", "remove", rule_id).stdout
    assert "write_file(src/**)" not in {r["spec"] for r in listed(workspace)}
    gone = sparrow("permissions", "remove", rule_id, check=False)
    assert gone.returncode == 1 and "no rule" in gone.stderr


def test_bad_rules_and_default_removal_exit_2(workspace: Path) -> None:
    bad = sparrow("permissions", "allow", "nope(x)", "-w", str(workspace), check=False)
    assert bad.returncode == 2 and "no tool is named 'nope'" in bad.stderr
    outside = sparrow("permissions", "deny", "Read(../x)", "-w", str(workspace), check=False)
    assert outside.returncode == 2 and "'..'" in outside.stderr
    default = sparrow("permissions", "remove", "default:.env", check=False)
    assert default.returncode == 2 and "cannot be removed" in default.stderr
    assert "Traceback" not in bad.stderr + outside.stderr + default.stderr


def test_import_claude_code_settings(workspace: Path) -> None:
    missing = sparrow("permissions", "import", "-w", str(workspace), check=False)
    assert missing.returncode == 2 and "no Claude Code settings" in missing.stderr

    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "allow": ["Bash(npm test:*)", "Edit(src/**)"],
                    "deny": ["Read(./.env.production)", "Read(~/secrets)"],
                    "ask": ["Teleport"],
                }
            }
        )
    )
    out = sparrow("permissions", "import", "--workspace", str(workspace)).stdout
    assert "imported allow Bash(npm test:*)" in out and "imported deny Read(.env.production)" in out
    assert "skipped  Read(~/secrets): " in out and "skipped  Teleport: no tool" in out
    assert "3 imported, 2 skipped" in out
    imported = [r for r in listed(workspace) if r["source"] == "claude-settings"]
    assert {r["spec"] for r in imported} == {"Bash(npm test:*)", "Edit(src/**)",
                                             "Read(.env.production)"}  # fmt: skip
    assert all(r["workspace"] == str(workspace) for r in imported)
