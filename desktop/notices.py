"""Notices that are never dropped: what could not be shown is kept and shown
at the next chance; what is over is withdrawn.

A notice is written to ``<state>/desktop-notices.json`` before it is sent and
struck from it once the daemon has taken it, so one that could not be shown
(no daemon, no session bus yet, the app closed) survives until it can be. The
next chance: a daemon taking the name (``NameOwnerChanged``), the next notice,
a slow timer, or the next start of the app. A notice whose subject is over (an
approval answered in the window, a run that ended) is struck and, when on
screen, closed. Notices of something live (an approval, Quit's wait, a context
warning) kept from an earlier process are over: it ended with that process.

The same file keeps the one-time things said once (``said``), such as the
first close-to-tray.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

from desktop.alerts import Notice

log = logging.getLogger(__name__)

FILE_NAME = "desktop-notices.json"
RETRY_SECONDS = 60.0
# Notices of what happened (a run ended, runs cut by Quit, a thing said once)
# stay until seen; the others are of something live (an approval, Quit's wait,
# a context warning, a monitored session), over when the process that raised
# them ended: never shown at a later start.
KEPT_ACROSS_STARTS = ("run:", "quit-cut", "said:")


def over_at_exit(key: str) -> bool:
    return not key.startswith(KEPT_ACROSS_STARTS)


class Sender(Protocol):
    def send(self, notice: Notice) -> int | None: ...

    def close(self, key: str) -> bool: ...


def _notice(data: Any) -> Notice | None:
    try:
        actions = tuple((str(k), str(label)) for k, label in data.get("actions", ()))
        return Notice(
            key=str(data["key"]),
            level=str(data["level"]),
            title=str(data["title"]),
            body=str(data["body"]),
            urgent=bool(data["urgent"]),
            run_id=str(data.get("run_id", "")),
            actions=actions,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


class NoticeDesk:
    def __init__(
        self,
        state_dir: Path,
        sender: Sender,
        *,
        retry_seconds: float = RETRY_SECONDS,
        on_shown: Callable[[Notice], None] | None = None,
    ) -> None:
        self.path = state_dir / FILE_NAME
        self._sender = sender
        self._retry_seconds = retry_seconds
        self._on_shown = on_shown
        self._lock = threading.RLock()
        self._pending: dict[str, Notice] = {}
        self._said: set[str] = set()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
        self._load()

    # --- the file ------------------------------------------------------------

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            # Kept aside, not overwritten: what it held may still be read by a person.
            log.warning("%s cannot be read (%s); starting with no pending notices", self.path, exc)
            with contextlib.suppress(OSError):
                self.path.replace(self.path.with_suffix(".unreadable"))
            return
        if not isinstance(data, dict):
            return
        for item in data.get("pending", []):
            notice = _notice(item) if isinstance(item, dict) else None
            if notice is not None and not over_at_exit(notice.key):
                self._pending[notice.key] = notice
        self._said = {s for s in data.get("said", []) if isinstance(s, str)}
        self._save()

    def _save(self) -> None:
        data = {
            "pending": [asdict(n) for n in self._pending.values()],
            "said": sorted(self._said),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(partial, self.path)

    # --- notices -------------------------------------------------------------

    def post(self, notice: Notice) -> bool:
        """Keep ``notice`` and try to show it (and any kept before); True if shown."""
        with self._lock:
            self._pending[notice.key] = notice
            self._save()
        self.retry()
        return notice.key not in self.pending()

    def withdraw(self, key: str) -> None:
        """The subject of the notice ``key`` is over: strike it, close it on screen."""
        with self._lock:
            if self._pending.pop(key, None) is not None:
                self._save()
        self._sender.close(key)

    def retry(self) -> int:
        """Show what is kept; how many notices are still waiting."""
        with self._lock:
            for key, notice in list(self._pending.items()):
                if self._sender.send(notice) is None:
                    break  # the daemon is not there: the rest waits too
                del self._pending[key]
                self._save()
                if self._on_shown is not None:
                    self._on_shown(notice)
            return len(self._pending)

    def pending(self) -> list[str]:
        with self._lock:
            return list(self._pending)

    def say_once(self, name: str, notice: Notice) -> bool:
        """Post ``notice`` unless ``name`` was said before (in any earlier run of the app)."""
        with self._lock:
            if name in self._said:
                return False
            self._said.add(name)
            self._save()
        self.post(notice)
        return True

    # --- the slow timer ------------------------------------------------------

    def start(self) -> None:
        self._timer = threading.Thread(target=self._tick, name="notice-retry", daemon=True)
        self._timer.start()

    def stop(self) -> None:
        self._stop.set()
        if self._timer is not None:
            self._timer.join(5)

    def _tick(self) -> None:
        while not self._stop.wait(self._retry_seconds):
            if self.pending():
                try:
                    self.retry()
                except Exception:
                    log.exception("retrying the kept notices failed")
