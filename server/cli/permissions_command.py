"""``sparrow permissions``: list, add (allow / ask / deny), remove and import
the permission rules. The rule book is the store the running app reads at every
tool call, so a rule added here applies to a live run's next call."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from server.cli.context import fail, open_state
from server.engine.permissions.rulebook import RuleBook
from server.engine.permissions.rules import Rule, RuleError, Scope
from server.engine.tools.registry import default_tools


@contextmanager
def _rulebook() -> Iterator[RuleBook]:
    _paths, store = open_state()
    try:
        yield RuleBook(store, default_tools().names())
    finally:
        store.close()


def _workspace(args: argparse.Namespace) -> Path:
    # Resolved as a run resolves its workspace, so that the rule's workspace matches.
    return Path(args.workspace or ".").expanduser().resolve()


def _where(rule: Rule) -> str:
    where = f"workspace {rule.workspace}" if rule.scope == Scope.WORKSPACE else rule.scope.value
    if rule.provider:
        where += f", provider {rule.provider}"
    if rule.surface:
        where += f", surface {rule.surface}"
    return where


def describe(rule: Rule) -> str:
    """One line: effect, spec, scope, source, hits, id."""
    return (
        f"{rule.effect.value:<6} {rule.spec:<28} {_where(rule):<40} {rule.source:<15} "
        f"{rule.hits:>4}  {rule.id}"
    )


def handle(args: argparse.Namespace) -> int:
    action = args.permissions_action
    try:
        if action == "list":
            return _list(args)
        if action in ("allow", "ask", "deny"):
            return _add(args)
        if action == "remove":
            return _remove(args)
        return _import(args)
    except RuleError as exc:
        return fail(str(exc), 2)


def _list(args: argparse.Namespace) -> int:
    workspace = _workspace(args)
    with _rulebook() as book:
        rules = book.rules(workspace=str(workspace))
    if args.json:
        for rule in rules:
            print(json.dumps(rule.to_dict(), ensure_ascii=False))
        return 0
    print(f"{'EFFECT':<6} {'RULE':<28} {'SCOPE':<40} {'SOURCE':<15} {'HITS':>4}  ID")
    for rule in rules:
        print(describe(rule))
    return 0


def _add(args: argparse.Namespace) -> int:
    workspace: str | None = None
    if args.scope == Scope.WORKSPACE.value:
        folder = _workspace(args)
        if not folder.is_dir():
            return fail(f"workspace not found: {folder}", 2)
        workspace = str(folder)
    with _rulebook() as book:
        rule = book.create(
            args.permissions_action,
            args.spec,
            scope=args.scope,
            workspace=workspace,
            provider=args.provider,
            surface=args.surface,
        )
    print(f"saved: {rule.effect.value} {rule.spec} ({_where(rule)}) id {rule.id}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    with _rulebook() as book:
        removed = book.delete(args.rule_id)
    if not removed:
        return fail(f"no rule '{args.rule_id}' (see `sparrow permissions list`)")
    print(f"removed rule {args.rule_id}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from server.engine.permissions.claude_import import import_claude_rules

    workspace = _workspace(args)
    with _rulebook() as book:
        result = import_claude_rules(book, workspace)
    print(f"read {', '.join(result.files)}")
    for rule in result.imported:
        print(f"imported {rule.effect.value} {rule.spec}  id {rule.id}")
    for text, why in result.skipped:
        print(f"skipped  {text}: {why}")
    print(f"{len(result.imported)} imported, {len(result.skipped)} skipped")
    return 0
