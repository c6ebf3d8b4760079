"""``sparrow checkpoints`` (list, ``prune``), ``sparrow rewind`` and
``sparrow diff``: the checkpoint timeline of a workspace from a terminal. The
engine decides what a diff, a rewind or a prune is; this only renders."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from server.cli.context import fail, open_state
from server.core.settings import SettingsError, load_settings

if TYPE_CHECKING:
    from server.engine.checkpoints import Checkpoint, CheckpointStore, FileDiff
    from server.engine.store import Store


@contextmanager
def _checkpoints(workspace: Path | None) -> Iterator[CheckpointStore]:
    with _state(workspace) as (store, _):
        yield store


@contextmanager
def _state(workspace: Path | None) -> Iterator[tuple[CheckpointStore, Store]]:
    from server.engine.checkpoints import CheckpointStore  # pygit2: load only here

    paths, store = open_state()
    try:
        settings = load_settings(paths.config_file, workspace)
        yield CheckpointStore(paths, settings.checkpoints, store), store
    finally:
        store.close()


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def _files(checkpoint: Checkpoint) -> str:
    names = checkpoint.files_changed
    if checkpoint.baseline:
        return f"baseline ({len(names):,} files)"
    shown = ", ".join(names[:3]) + (f" +{len(names) - 3} more" if len(names) > 3 else "")
    return f"{len(names)}  {shown}".rstrip()


def handle(args: argparse.Namespace) -> int:
    """Dispatch: the three commands share one module (and one lazy import)."""
    from server.engine.checkpoints import CheckpointError

    try:
        if args.command == "rewind":
            return _rewind(args)
        if args.command == "diff":
            return _diff(args)
        if getattr(args, "checkpoints_action", None) == "prune":
            return _prune(args)
        return _list(args)
    except (CheckpointError, SettingsError) as exc:
        return fail(str(exc))


def _workspace(args: argparse.Namespace) -> Path:
    return Path(args.workspace or ".").expanduser().resolve()


def _list(args: argparse.Namespace) -> int:
    workspace = None if args.run and not args.workspace else _workspace(args)
    with _checkpoints(workspace) as store:
        found = store.list(workspace=workspace, run_id=args.run)
    if args.json:
        for checkpoint in found:
            print(json.dumps(checkpoint.to_dict(), ensure_ascii=False))
        return 0
    if not found:
        where = f"run {args.run}" if args.run else str(workspace)
        print(f"no checkpoints for {where}")
        return 0
    print(f"{'#':>3}  {'CHECKPOINT':<26} {'TIME':<19}  {'RUN':<26} {'TURN':>4}  {'TOOL':<12} FILES")
    for n, c in enumerate(found, start=1):
        print(
            f"{n:>3}  {c.id:<26} {_when(c.created_at):<19}  {c.run_id:<26} {c.turn:>4}  "
            f"{c.tool:<12} {_files(c)}"
        )
    return 0


def _print_diff(files: list[FileDiff]) -> None:
    for f in files:
        if f.binary:
            print(f"Binary file {f.path} {f.status} ({f.old_size} -> {f.new_size} bytes)")
            continue
        patch = f.patch if f.patch.endswith("\n") or not f.patch else f.patch + "\n"
        sys.stdout.write(patch or f"{f.path}: {f.status}\n")


def _diff(args: argparse.Namespace) -> int:
    with _checkpoints(None) as store:
        files = store.diff(args.checkpoint, args.to)
    if not files:
        print("no changes")
        return 0
    _print_diff(files)
    return 0


def _target(store: CheckpointStore, workspace: Path, which: str) -> Checkpoint:
    from server.engine.checkpoints import CheckpointError, CheckpointNotFound

    if which.isdigit():
        n = int(which)
        found = store.list(workspace=workspace)
        if n < 1 or n > len(found):
            raise CheckpointNotFound(
                f"{workspace} has {len(found)} checkpoint(s): no number {n} "
                "(see `sparrow checkpoints`)"
            )
        return found[n - 1]
    checkpoint = store.get(which)
    if checkpoint is None:
        raise CheckpointNotFound(f"no checkpoint '{which}' (see `sparrow checkpoints`)")
    if checkpoint.workspace != str(workspace):
        raise CheckpointError(
            f"checkpoint '{which}' belongs to {checkpoint.workspace}, not {workspace}"
        )
    return checkpoint


def _rewind(args: argparse.Namespace) -> int:
    workspace = _workspace(args)
    with _state(workspace) as (store, runs):
        live = runs.running_on(str(workspace))
        if live:
            # An agent still working would go on from a workspace changed under it.
            return fail(
                f"run {live[0].id} is working on {workspace}: cancel it or let it finish "
                "before rewinding"
            )
        target = _target(store, workspace, args.checkpoint)
        files = store.diff(target.id)
        print(
            f"rewind {workspace} to checkpoint {target.id} "
            f"({_when(target.created_at)}, before {target.tool} in run {target.run_id})"
        )
        if not files:
            print("the workspace already matches it: nothing to do")
            return 0
        print("will change:")
        for f in files:
            # The diff goes from the checkpoint to now: "added" now means removed by the rewind.
            action = {"added": "remove", "deleted": "restore"}.get(f.status, "restore")
            print(f"  {action:<8} {f.path}")
        if not args.yes:
            if not sys.stdin.isatty():
                return fail("not rewinding without confirmation: add --yes")
            answer = input("Rewind? [y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                print("not rewound")
                return 1
        result = store.rewind(workspace, target.id, run_id=target.run_id)
    for path in result.restored:
        print(f"restored {path}")
    for path in result.removed:
        print(f"removed  {path}")
    for path in result.untouched:
        print(f"left     {path} (ignored or skipped now)")
    print(f"undo with: sparrow rewind {result.checkpoint_before.id} --workspace {workspace}")
    return 0


def _prune(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace).expanduser().resolve() if args.workspace else None
    with _checkpoints(workspace) as store:
        if args.older_than is None and args.keep is None:
            deleted = store.prune_by_settings(workspace)
        else:
            deleted = store.prune(workspace, max_age_days=args.older_than, keep=args.keep)
    print(f"deleted {deleted} checkpoint(s)")
    return 0
