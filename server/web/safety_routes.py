"""The safety routes: the mode and the dial, the emergency stop, the rules,
and the answers to approvals. Each parses, asks the runtime, and renders.
See docs/api.md, "Safety"."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from server.core.redaction import redact_value
from server.engine.approvals import ApprovalAnswer
from server.engine.permissions.claude_import import import_claude_rules
from server.engine.permissions.rules import RuleError, Scope, make_rule
from server.runtime.approvals import NothingToAnswer
from server.runtime.runs import RunRequestError
from server.web.api import _json_object, error, runs_of

ANSWERS = ("allow_once", "allow_always", "deny")


def _optional(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RunRequestError(f"'{key}' must be a string")
    return value


def _seconds(data: dict[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RunRequestError(f"'{key}' must be a time in seconds since the epoch")
    return float(value)


def _count(data: dict[str, Any], key: str) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RunRequestError(f"'{key}' must be a whole number")
    return value


async def get_safety(request: Request) -> JSONResponse:
    try:
        contract = runs_of(request).contract()
    except RunRequestError as exc:
        return error(400, str(exc))
    return JSONResponse(contract.to_dict())


async def put_safety(request: Request) -> JSONResponse:
    try:
        data = await _json_object(request)
        contract = runs_of(request).set_contract(
            mode=_optional(data, "mode"), level=data.get("level")
        )
    except RunRequestError as exc:
        return error(400, str(exc))
    return JSONResponse(contract.to_dict())


async def emergency_stop(request: Request) -> JSONResponse:
    runs = runs_of(request)
    stopped = runs.emergency_stop()
    return JSONResponse({"safety": runs.contract().to_dict(), "stopped": stopped})


async def list_rules(request: Request) -> JSONResponse:
    book = runs_of(request).rulebook
    params = request.query_params
    rules = book.rules(workspace=params.get("workspace"), session_id=params.get("session_id"))
    return JSONResponse({"rules": [rule.to_dict() for rule in rules]})


async def create_rule(request: Request) -> JSONResponse:
    try:
        data = await _json_object(request)
        rule = runs_of(request).rulebook.create(
            _optional(data, "effect") or "",
            _optional(data, "spec") or "",
            scope=_optional(data, "scope") or Scope.GLOBAL.value,
            workspace=_optional(data, "workspace"),
            session_id=_optional(data, "session_id"),
            provider=_optional(data, "provider"),
            surface=_optional(data, "surface"),
        )
    except (RunRequestError, RuleError) as exc:
        return error(400, str(exc))
    return JSONResponse({"rule": rule.to_dict()}, status_code=201)


async def restore_rule(request: Request) -> JSONResponse:
    """The Undo of a delete: the Rule object as GET /api/rules listed it."""
    book = runs_of(request).rulebook
    try:
        data = await _json_object(request)
        created_at = _seconds(data, "created_at")
        if created_at is None:
            raise RunRequestError("'created_at' is required: it is the rule's place in the list")
        parsed = make_rule(
            _optional(data, "effect") or "",
            _optional(data, "spec") or "",
            book.known_tools,
            scope=_optional(data, "scope") or Scope.GLOBAL.value,
            workspace=_optional(data, "workspace"),
            session_id=_optional(data, "session_id"),
            provider=_optional(data, "provider"),
            surface=_optional(data, "surface"),
            source=_optional(data, "source") or "user",
        )
        rule = book.restore(
            replace(
                parsed,
                id=_optional(data, "id") or "",
                hits=_count(data, "hits"),
                last_used_at=_seconds(data, "last_used_at"),
                created_at=created_at,
            )
        )
    except (RunRequestError, RuleError) as exc:
        return error(400, str(exc))
    return JSONResponse({"rule": rule.to_dict()}, status_code=201)


async def update_rule(request: Request) -> JSONResponse:
    book = runs_of(request).rulebook
    rule_id = request.path_params["rule_id"]
    if book.get(rule_id) is None:
        return error(404, "no such rule")
    try:
        data = await _json_object(request)
        keys = ("effect", "spec", "scope", "workspace", "session_id", "provider", "surface")
        changes = {key: _optional(data, key) for key in keys if key in data}
        rule = book.update(rule_id, **changes)
    except (RunRequestError, RuleError) as exc:
        return error(400, str(exc))
    return JSONResponse({"rule": rule.to_dict()})


async def delete_rule(request: Request) -> JSONResponse:
    rule_id = request.path_params["rule_id"]
    try:
        deleted = runs_of(request).rulebook.delete(rule_id)
    except RuleError as exc:
        return error(400, str(exc))
    if not deleted:
        return error(404, "no such rule")
    return JSONResponse({"deleted": rule_id})


async def import_rules(request: Request) -> JSONResponse:
    try:
        data = await _json_object(request)
        workspace = _optional(data, "workspace")
        if workspace is None:
            raise RunRequestError("'workspace' is required")
        result = import_claude_rules(runs_of(request).rulebook, Path(workspace))
    except (RunRequestError, RuleError) as exc:
        return error(400, str(exc))
    return JSONResponse(
        {
            "imported": [rule.to_dict() for rule in result.imported],
            "skipped": [{"text": text, "reason": why} for text, why in result.skipped],
            "files": result.files,
        }
    )


async def list_approvals(request: Request) -> JSONResponse:
    """The run's calls that wait for an answer now, as their ``approval_requested``
    events said them: for a surface that missed those events."""
    runs = runs_of(request)
    run_id = request.path_params["run_id"]
    if runs.get(run_id) is None:
        return error(404, "no such run")
    questions = runs.approvals.pending(run_id)
    return JSONResponse(
        {
            "approvals": [
                redact_value(
                    {
                        "run_id": q.run_id,
                        "call_id": q.call_id,
                        "tool": q.tool,
                        "args": q.args,
                        "risk": q.risk,
                        "reason": q.reason,
                        "suggested_rule": q.suggested_rule,
                        "timeout_seconds": q.timeout_seconds,
                        "expires_at": q.expires_at,
                    }
                )
                for q in questions
            ]
        }
    )


async def answer_approval(request: Request) -> JSONResponse:
    runs = runs_of(request)
    info = runs.get(request.path_params["run_id"])
    where = runs.elsewhere(info) if info is not None else None
    if where is not None:
        return error(409, where.note)  # another process asks: it is answered there
    try:
        data = await _json_object(request)
        decision = _optional(data, "decision")
        if decision not in ANSWERS:
            raise RunRequestError(f"'decision' must be one of {', '.join(ANSWERS)}")
        scope_text = _optional(data, "scope") or Scope.SESSION.value
        try:
            scope = Scope(scope_text)
        except ValueError:
            raise RunRequestError("'scope' must be session, workspace or global") from None
        answer = ApprovalAnswer(
            decision,  # type: ignore[arg-type]  # checked against ANSWERS above
            scope=scope,
            message=(_optional(data, "message") or "")[:2000],
            by=_optional(data, "by") or "web",
        )
        runs.answer(request.path_params["run_id"], request.path_params["call_id"], answer)
    except RunRequestError as exc:
        return error(400, str(exc))
    except NothingToAnswer as exc:
        return error(404, str(exc))
    return JSONResponse({"resolved": {"decision": answer.decision, "scope": scope.value}})


def safety_routes() -> list[BaseRoute]:
    return [
        Route("/api/safety", get_safety, methods=["GET"]),
        Route("/api/safety", put_safety, methods=["PUT"]),
        Route("/api/safety/emergency-stop", emergency_stop, methods=["POST"]),
        Route("/api/rules", list_rules, methods=["GET"]),
        Route("/api/rules", create_rule, methods=["POST"]),
        Route("/api/rules/import", import_rules, methods=["POST"]),
        Route("/api/rules/restore", restore_rule, methods=["POST"]),
        Route("/api/rules/{rule_id}", update_rule, methods=["PUT"]),
        Route("/api/rules/{rule_id}", delete_rule, methods=["DELETE"]),
        Route("/api/runs/{run_id}/approvals", list_approvals, methods=["GET"]),
        Route("/api/runs/{run_id}/approvals/{call_id}", answer_approval, methods=["POST"]),
    ]
