"""``sparrow memory``: the facts (list, add, search, forget) and the two docs
(show, edit, replace). Every write passes the same guards as the agent's
memory tool and the window's; a rejection exits 1 with its reason."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from server.cli.context import fail, open_state
from server.core.formatting import age
from server.engine.memory import Doc, DocKind, Fact, Memory, MemoryWriteError


@contextmanager
def _memory() -> Iterator[Memory]:
    paths, store = open_state()
    try:
        yield Memory(paths, store)
    finally:
        store.close()


def _workspace(args: argparse.Namespace, *, default_here: bool) -> Path | None:
    if args.workspace is None and not default_here:
        return None
    return Path(args.workspace or ".").expanduser().resolve()


def handle(args: argparse.Namespace) -> int:
    action = args.memory_action
    try:
        if action == "list":
            return _list(args)
        if action == "add":
            return _add(args)
        if action == "search":
            return _search(args)
        if action == "forget":
            return _forget(args)
        return _docs(args)
    except MemoryWriteError as exc:
        return fail(str(exc))


def _print_facts(facts: list[Fact], as_json: bool) -> None:
    if as_json:
        for fact in facts:
            print(json.dumps(fact.to_dict(), ensure_ascii=False))
        return
    if not facts:
        print("no facts")
        return
    print(f"{'ID':>5}  {'KEY':<24} {'SCOPE':<10} {'UPDATED':<16} VALUE")
    for fact in facts:
        scope = "workspace" if fact.workspace else "global"
        value = " ".join(fact.value.split())
        shown = value if len(value) <= 80 else value[:79] + "…"
        print(f"{fact.id:>5}  {fact.key:<24} {scope:<10} {age(fact.updated_at):<16} {shown}")


def _list(args: argparse.Namespace) -> int:
    with _memory() as memory:
        facts = memory.facts.list_facts(_workspace(args, default_here=False))
    _print_facts(facts, args.json)
    return 0


def _add(args: argparse.Namespace) -> int:
    workspace = _workspace(args, default_here=False)
    if workspace is not None and not workspace.is_dir():
        return fail(f"workspace not found: {workspace}", 2)
    with _memory() as memory:
        fact = memory.facts.remember(args.key, args.value, workspace)
    where = f"workspace {fact.workspace}" if fact.workspace else "global"
    print(f"saved: {fact.key} ({where}) id {fact.id}")
    return 0


def _search(args: argparse.Namespace) -> int:
    with _memory() as memory:
        facts = memory.facts.search(args.term, _workspace(args, default_here=False))
    _print_facts(facts, args.json)
    return 0


def _forget(args: argparse.Namespace) -> int:
    ident: int | str = int(args.fact) if args.fact.strip().isdigit() else args.fact
    with _memory() as memory:
        gone = memory.facts.forget(ident, _workspace(args, default_here=False))
    if gone is None:
        return fail(
            f"no fact '{args.fact}'"
            + ("" if args.workspace else " among the global facts (a workspace's: --workspace DIR)")
            + " (see `sparrow memory list`)"
        )
    print(f"forgot {gone.key} (id {gone.id})")
    return 0


def _describe(doc: Doc) -> str:
    title = doc.name if doc.workspace is None else f"{doc.name} of {doc.workspace}"
    head = f"{title}: {doc.size:,} / {doc.limit:,} characters  ({doc.path})"
    body = "\n".join(f"  {line}" for line in doc.text.splitlines()) if doc.text else "  (empty)"
    return f"{head}\n{body}"


def _docs(args: argparse.Namespace) -> int:
    workspace = _workspace(args, default_here=True)
    with _memory() as memory:
        if args.set is not None:
            name, source = args.set
            if name not in ("user", "memory"):
                return fail(f"--set {name}: the doc is 'user' or 'memory'", 2)
            kind = DocKind(name)
            text = sys.stdin.read() if source == "-" else _read_file(Path(source))
            doc = memory.docs.write(kind, text, workspace)
            print(f"saved {doc.name}: {doc.size:,} / {doc.limit:,} characters")
            return 0
        if args.edit is not None:
            return _edit(memory, DocKind(args.edit), workspace)
        docs = [memory.docs.read(DocKind.USER), memory.docs.read(DocKind.MEMORY, workspace)]
    if args.json:
        print(json.dumps({d.kind.value: d.to_dict() for d in docs}, ensure_ascii=False))
        return 0
    print("\n\n".join(_describe(doc) for doc in docs))
    return 0


def _read_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MemoryWriteError(f"cannot read {path}: {exc}") from exc


def _edit(memory: Memory, kind: DocKind, workspace: Path | None) -> int:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        return fail("set $EDITOR (or $VISUAL) to edit a memory doc, or use --set DOC FILE")
    doc = memory.docs.read(kind, workspace)
    # A copy outside Sparrow's folders: the doc itself changes only through the guards.
    handle, name = tempfile.mkstemp(prefix=f"sparrow-{kind.value}-", suffix=".md")
    draft = Path(name)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(doc.text + "\n" if doc.text else "")
    code = subprocess.call([*shlex.split(editor), str(draft)])
    if code != 0:
        draft.unlink(missing_ok=True)
        return fail(f"the editor exited {code}: {doc.name} is unchanged")
    text = draft.read_text(encoding="utf-8")
    if text.strip() == doc.text:
        draft.unlink(missing_ok=True)
        print(f"{doc.name} is unchanged")
        return 0
    try:
        saved = memory.docs.write(kind, text, workspace)
    except MemoryWriteError as exc:
        return fail(f"{exc} (your text is kept in {draft})")
    draft.unlink(missing_ok=True)
    print(f"saved {saved.name}: {saved.size:,} / {saved.limit:,} characters")
    return 0
