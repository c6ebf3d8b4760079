"""The desktop's own HTTP client of the embedded server, for what the tray and
the notifications do: the same routes, and so the same paths, as the window's
buttons (an approval answered from a notification goes through
``POST /api/runs/{run}/approvals/{call}`` with ``by: notification``)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

TIMEOUT = 10.0
NOTIFICATION_SURFACE = "notification"


class AppError(RuntimeError):
    """The server refused or could not be reached; the message says which."""


class AppClient:
    def __init__(self, port: int, token: str, host: str = "127.0.0.1") -> None:
        self.base_url = f"http://{host}:{port}"
        self._token = token

    def _request(self, method: str, path: str, body: object = None) -> dict[str, Any]:
        request = urllib.request.Request(
            self.base_url + path,
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={
                "Authorization": f"Bearer {self._token}",
                "Content-Type": "application/json",
                "Origin": self.base_url,
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                data = json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            try:
                detail = json.loads(exc.read()).get("error", exc.reason)
            except (ValueError, AttributeError):
                detail = exc.reason
            raise AppError(f"{method} {path}: {exc.code} {detail}") from None
        except (OSError, ValueError) as exc:
            raise AppError(f"{method} {path}: {exc}") from None
        return data if isinstance(data, dict) else {}

    def runs(self) -> list[dict[str, Any]]:
        runs = self._request("GET", "/api/runs").get("runs")
        return [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []

    def live_runs(self) -> list[tuple[str, str]]:
        """(run id, task) of the runs this app drives now."""
        return [(str(r.get("id")), str(r.get("task") or "")) for r in self.runs() if r.get("live")]

    def run(self, run_id: str) -> dict[str, Any]:
        run = self._request("GET", f"/api/runs/{quote(run_id, safe='')}").get("run")
        return run if isinstance(run, dict) else {}

    def cancel(self, run_id: str) -> None:
        self._request("POST", f"/api/runs/{quote(run_id, safe='')}/cancel", {})

    def emergency_stop(self) -> list[str]:
        stopped = self._request("POST", "/api/safety/emergency-stop", {}).get("stopped")
        return [str(s) for s in stopped] if isinstance(stopped, list) else []

    def approvals(self, run_id: str) -> list[dict[str, Any]]:
        """The calls of ``run_id`` waiting for an answer now (as their events said them)."""
        path = f"/api/runs/{quote(run_id, safe='')}/approvals"
        asks = self._request("GET", path).get("approvals")
        return [a for a in asks if isinstance(a, dict)] if isinstance(asks, list) else []

    def answer(self, run_id: str, call_id: str, decision: str) -> None:
        path = f"/api/runs/{quote(run_id, safe='')}/approvals/{quote(call_id, safe='')}"
        self._request("POST", path, {"decision": decision, "by": NOTIFICATION_SURFACE})
