"""What is done to a whole session: delete it (its transcripts, index rows,
runs and the checkpoints only it refers to), the age limit of the settings,
and resuming it with a follow-up."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from server.core.paths import Paths
from server.core.settings import Settings, SettingsError, load_settings
from server.engine.store import Store

if TYPE_CHECKING:  # the runs module is heavy: the CLI's quick commands open the store too
    from server.runtime.runs import RunRequest

DAY = 86_400.0


class NoSuchSession(LookupError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"no session {session_id!r}; `sparrow sessions` lists them")


class SessionRunning(RuntimeError):
    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"the session is running ({run_id}): cancel it or wait for it to finish "
            "before you delete it"
        )


def delete_session(paths: Paths, store: Store, session_id: str) -> int:
    """Delete the session; returns how many of its checkpoints went with it.
    The rows go before the files, so that no row ever names a missing transcript."""
    if store.get_session(session_id) is None:
        raise NoSuchSession(session_id)
    runs = store.session_runs(session_id)
    going = [r for r in runs if r.status == "running"]
    if going:
        raise SessionRunning(going[-1].id)
    doomed = store.checkpoints_only_of(session_id)
    removed = 0
    if doomed:
        from server.engine.checkpoints import CheckpointStore  # pygit2: load only when needed

        settings = _settings(paths) or Settings()
        removed = CheckpointStore(paths, settings.checkpoints, store).delete_ids(doomed)
    store.delete_session_rows(session_id)
    for run in runs:
        Path(run.transcript).unlink(missing_ok=True)
    return removed


def apply_retention(paths: Paths, store: Store, settings: Settings | None = None) -> int:
    """Delete the sessions past ``[sessions] keep_days`` (never a running one);
    how many went. Unreadable settings keep everything: deleting is never a guess."""
    settings = settings or _settings(paths)
    if settings is None or not settings.sessions.keep_days:
        return 0
    deleted = 0
    for session_id in store.sessions_idle_since(time.time() - settings.sessions.keep_days * DAY):
        try:
            delete_session(paths, store, session_id)
        except (NoSuchSession, SessionRunning):
            continue  # another process got there first, or started a follow-up
        deleted += 1
    return deleted


def _settings(paths: Paths) -> Settings | None:
    try:
        return load_settings(paths.config_file)
    except SettingsError:
        return None


def resume_request(store: Store, session_id: str, task: str) -> RunRequest:
    """The run that continues a session: with its whole history, or, once it
    was compacted, as a new session (its child) from its last handoff doc."""
    from server.runtime.runs import RunRequest, RunRequestError

    info = store.session_info(session_id)
    if info is None:
        raise NoSuchSession(session_id)
    if info.status == "running":
        raise RunRequestError(
            f"the session is still running ({info.last_run.id}): wait for its answer, "
            "or cancel it, before you resume it"
        )
    handoff = store.session_handoff(session_id)
    if handoff and Path(handoff).is_file():
        return RunRequest(info.workspace, task, handoff=handoff, parent=session_id)
    return RunRequest("", task, continue_from=info.last_run.id)
