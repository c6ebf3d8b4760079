"""What a failed model call means for the user: whether it is worth another
attempt (and after how long), and, when Sparrow gives up, one line that names
the fix. pydantic-ai reports every vendor's failure as a category of
``ModelAPIError``; the classes are imported when a failure is classified,
which only happens after a real call."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final

from server.providers.endpoints import Endpoint

# Longest wait a provider may ask for before Sparrow stops retrying and says so.
MAX_WAIT_SECONDS: Final = 60.0
BACKOFF_SECONDS: Final = (1.0, 2.0, 4.0, 8.0, 16.0)


@dataclass(frozen=True)
class Failure:
    kind: str  # auth, not_found, context, rate_limit, overloaded, connect, dropped, …
    message: str  # the line shown when Sparrow gives up: what happened and the fix
    short: str  # what a retry notice says happened
    retry: bool = False  # worth waiting and asking again
    wait: float | None = None  # what the provider asked for


def backoff(attempt: int, asked: float | None) -> float:
    """How long to wait before attempt ``attempt + 1``: what the provider asked,
    else an exponential backoff."""
    if asked is not None:
        return max(0.0, asked)
    return BACKOFF_SECONDS[min(attempt - 1, len(BACKOFF_SECONDS) - 1)]


def _status(exc: BaseException) -> str:
    code = getattr(exc, "status_code", None)
    return f" ({code})" if code else ""


def _provider_words(exc: BaseException) -> str:
    """The provider's own message, without the SDK's framing, on one short line."""
    body = getattr(exc, "body", None)
    text = ""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            text = str(error.get("message") or "")
        elif isinstance(error, str):
            text = error
    if not text:
        text = str(getattr(exc, "message", "") or exc)
    line = " ".join(text.split())
    return line[:300] + ("…" if len(line) > 300 else "")


def classify(exc: BaseException, endpoint: Endpoint, model: str) -> Failure:
    from pydantic_ai import exceptions as ex

    who = endpoint.label
    if isinstance(exc, ex.ModelAuthenticationError):
        where = f" (the key from {endpoint.key_source})" if endpoint.key_source else ""
        return Failure(
            "auth",
            f"{who} refused the API key{where}{_status(exc)}: set a valid one with "
            f"`sparrow keys set {endpoint.name}` or in Settings",
            "the key was refused",
        )
    if isinstance(exc, ex.ModelNotFoundError):
        return Failure(
            "not_found",
            f"{who} has no model {model!r}{_status(exc)}: {_provider_words(exc)}",
            "unknown model",
        )
    if isinstance(exc, ex.ModelContextWindowExceededError):
        return Failure(
            "context",
            f"the conversation no longer fits {model}'s context window{_status(exc)}: "
            f"{_provider_words(exc)} — start a new conversation, or pick a model with a "
            "larger window",
            "context too long",
        )
    if isinstance(exc, ex.ModelQuotaExceededError):
        return Failure(
            "quota",
            f"{who} says the account's quota or credits are used up{_status(exc)}: "
            "check its billing, or pick another model",
            "quota exhausted",
        )
    if isinstance(exc, ex.ModelRateLimitError):
        return Failure(
            "rate_limit",
            f"{who} kept refusing requests for the rate limit{_status(exc)}: wait a minute "
            "and send again",
            f"rate limited{_status(exc)}",
            retry=True,
            wait=exc.retry_after,
        )
    if isinstance(exc, ex.ModelUnavailableError):
        return Failure(
            "overloaded",
            f"{who} stayed overloaded or unavailable{_status(exc)}: try again later, or "
            "pick another model",
            f"overloaded{_status(exc)}",
            retry=True,
            wait=exc.retry_after,
        )
    if isinstance(exc, ex.ModelServerError):
        return Failure(
            "server",
            f"{who} kept failing with a server error{_status(exc)}: {_provider_words(exc)}",
            f"server error{_status(exc)}",
            retry=True,
            wait=exc.retry_after,
        )
    if isinstance(exc, ex.ModelRequestTimeout | ex.ModelTimeoutError):
        return Failure(
            "timeout",
            f"{who} did not answer in time at {endpoint.shown_url}",
            "timed out",
            retry=not endpoint.local,
        )
    if isinstance(exc, ex.ModelConnectionError):
        if exc.phase in ("connect", "pool"):
            return cannot_connect(endpoint, _cause(exc))
        return Failure(
            "dropped",
            f"the connection to {who} dropped in the middle of the response, twice "
            f"({_cause(exc)}): check the network and send again",
            "the connection dropped mid-response",
        )
    if isinstance(exc, ex.ModelRequestRejectedError):
        return Failure(
            "rejected",
            f"{who} refused the request{_status(exc)}: {_provider_words(exc)}",
            "request refused",
        )
    if isinstance(exc, ex.ModelAPIError):
        return Failure("api", f"{who} failed{_status(exc)}: {_provider_words(exc)}", "failed")
    return Failure(
        "unreadable",
        f"{who} sent a response Sparrow could not read: {type(exc).__name__}: {exc}",
        "unreadable response",
    )


def cannot_connect(endpoint: Endpoint, cause: str) -> Failure:
    """Nothing answers at the endpoint's address (``cause``: the transport's reason)."""
    who = endpoint.label
    hint = f": is {who} running?" if endpoint.local else ": check the network"
    return Failure(
        "connect",
        f"cannot connect to {who} at {endpoint.shown_url} ({cause}){hint}",
        "could not connect",
        # A local server that is not running will not start by itself.
        retry=not endpoint.local,
    )


def _cause(exc: BaseException) -> str:
    """The transport's reason (connection refused, reset…), not the SDK's wrapper text."""
    chain: list[BaseException] = []
    seen = exc.__cause__ or exc.__context__
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    for link in chain:
        number = getattr(link, "errno", None)
        if isinstance(number, int) and number > 0:
            return os.strerror(number).lower()
        reason = getattr(link, "strerror", None)
        if reason:
            return str(reason).lower()
    for link in chain:
        text = str(link)
        if text:
            return text.splitlines()[0][:120]
    return str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
