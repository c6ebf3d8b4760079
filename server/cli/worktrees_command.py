"""``sparrow worktrees``: the worktrees of `worktree` sandbox runs, and
``sparrow worktrees prune`` to remove those of finished runs."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.cli.context import fail, open_state

if TYPE_CHECKING:
    from server.engine.store import Store


def handle(args: argparse.Namespace) -> int:
    from server.engine.sandbox.worktree_list import list_worktrees, prune

    paths, store = open_state()
    try:
        found = list_worktrees(paths.state / "worktrees", _statuses(store))
    finally:
        store.close()
    if getattr(args, "worktrees_action", None) == "prune":
        if args.run:
            found = [w for w in found if w.run_id == args.run]
            if not found:
                return fail(f"no worktree of the run {args.run} (see `sparrow worktrees`)")
        if not found:
            print("no worktrees to prune")
            return 0
        kept = 0
        for worktree in found:
            done = prune(worktree, force=args.force)
            kept += not done.removed
            print(f"{done.run_id}: {done.said}")
        return 1 if kept and args.run else 0
    if args.json:
        for worktree in found:
            print(json.dumps(worktree.to_dict(), ensure_ascii=False))
        return 0
    if not found:
        print("no worktrees: runs with the sandbox 'worktree' leave theirs here for review")
        return 0
    for worktree in found:
        if worktree.problem:
            print(f"{worktree.run_id}  {worktree.path}\n  {worktree.problem}")
            continue
        print(
            f"{worktree.run_id}  {worktree.run_status}  {worktree.branch}  "
            f"{worktree.commits} commit(s), {worktree.uncommitted} uncommitted change(s)\n"
            f"  {worktree.path}  (of {worktree.repository})\n  {worktree.merge_hint}"
        )
    return 0


def _statuses(store: Store) -> Callable[[str], str]:
    """A run's status, asked of the store for each worktree (there are few)."""

    def status_of(run_id: str) -> str:
        info = store.get_run(run_id)
        return info.status if info is not None else "unknown"

    return status_of
