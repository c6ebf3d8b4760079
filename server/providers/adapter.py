"""A real model behind Sparrow's Provider interface, through pydantic-ai-slim's
direct request API over the vendor's own SDK.

Retries are Sparrow's, not the SDK's (its clients are built with
``max_retries=0``): each wait is a ``RetryNotice`` the user sees, honours the
provider's ``retry-after``, and a cancel ends it at once. A connection that
drops mid-response voids what streamed (``ResponseDiscarded``) and the turn is
asked again, once."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio

from server.core.settings import ModelSettings
from server.providers.base import (
    AssistantMessage,
    ContextTooLong,
    Message,
    ProviderError,
    ResponseDiscarded,
    RetryNotice,
    StreamPart,
    TextChunk,
    ToolSpec,
    UsageChunk,
)
from server.providers.endpoints import Endpoint
from server.providers.failures import MAX_WAIT_SECONDS, Failure, backoff, classify

if TYPE_CHECKING:
    from pydantic_ai.models import Model

# Thinking levels of [models] thinking, as pydantic-ai's unified setting takes them.
_THINKING: dict[str, bool | str] = {"off": False, "low": "low", "medium": "medium", "high": "high"}
# A stream that drops mid-response is asked again this many times.
DROPPED_RETRIES = 1


def _call_ids(messages: Sequence[Message]) -> set[str]:
    return {c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}


class ModelAdapter:
    # A real model can write the summary of a compaction (a scripted one cannot).
    can_summarise = True
    # Whether image parts go to it (capabilities.py; make_provider sets it).
    accepts_images = False

    def __init__(self, endpoint: Endpoint, model: str, settings: ModelSettings) -> None:
        self.endpoint = endpoint
        self.model = model
        self.settings = settings
        self._model: Model | None = None
        self._client: Any = None  # the SDK's client: ours to close, pydantic-ai leaves it
        # The context window the endpoint says it serves (llama.cpp, vLLM, LM Studio).
        self.reported_window: int | None = None

    @property
    def name(self) -> str:
        return f"{self.endpoint.name}:{self.model}"

    async def __aenter__(self) -> Self:
        # The SDKs cost ~1.5 s to import: never on the event loop, which serves the window.
        await anyio.to_thread.run_sync(_import_sdk, self.endpoint.kind)
        if self.endpoint.local:
            await self._check_local_server()
        self._model, self._client = _build_model(
            self.endpoint, self.model, self.settings.request_timeout_seconds
        )
        await self._model.__aenter__()
        return self

    async def _check_local_server(self) -> None:
        """A local server answers at once: say now, in one line, that it is not
        running or does not have the model, rather than after a failed turn."""
        from server.providers.discovery import list_models

        offer = await list_models(self.endpoint)
        if not offer.reachable:
            raise ProviderError(offer.error)
        served = set(offer.models) | {m.removesuffix(":latest") for m in offer.models}
        # A server of one model (llama.cpp) serves it under any name.
        if len(offer.models) > 1 and self.model not in served:
            pull = f" (`ollama pull {self.model}`)" if self.endpoint.name == "ollama" else ""
            raise ProviderError(
                f"{self.endpoint.label} has no model {self.model!r}{pull}; it has: "
                + ", ".join(offer.models[:12])
            )
        self.reported_window = offer.windows.get(self.model) or (
            next(iter(offer.windows.values()), None) if len(offer.models) == 1 else None
        )

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        model, self._model = self._model, None
        client, self._client = self._client, None
        with anyio.CancelScope(shield=True):
            if model is not None:
                await model.__aexit__(kind, exc, tb)
            if client is not None:
                await client.close()

    def _model_settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = {
            "max_retries": 0,
            # Sparrow's system prompt says all it means; nothing is added to it.
            "framing_announcement": "never",
        }
        if self.endpoint.kind == "anthropic":
            settings["cache"] = True
        if self.settings.max_output_tokens:
            settings["max_tokens"] = self.settings.max_output_tokens
        if self.settings.thinking:
            settings["thinking"] = _THINKING[self.settings.thinking]
        return settings

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system: str = ""
    ) -> AsyncGenerator[StreamPart, None]:
        from pydantic_ai.direct import model_request_stream
        from pydantic_ai.messages import PartDeltaEvent, TextPartDelta

        from server.providers.translate import (
            EventMapper,
            request_parameters,
            to_model_messages,
            to_usage,
        )

        if self._model is None:
            raise RuntimeError("open the adapter (async with) before streaming")
        outgoing = to_model_messages(messages, system, self.endpoint.name)
        parameters = request_parameters(tools)
        retries, dropped = 0, 0
        while True:
            streamed = False
            # One deadline for the whole response (pydantic-ai's request_timeout puts
            # a cancel scope around every event: a sixth of the CPU of a fast stream).
            deadline = time.monotonic() + self.settings.request_timeout_seconds
            try:
                async with model_request_stream(
                    self._model,
                    outgoing,
                    model_settings=self._model_settings(),  # type: ignore[arg-type]
                    model_request_parameters=parameters,
                ) as response:
                    mapper = EventMapper(self.endpoint.name, taken=_call_ids(messages))
                    async for event in response:
                        if time.monotonic() > deadline:
                            raise ProviderError(
                                f"{self.endpoint.label} did not finish its answer within "
                                f"{self.settings.request_timeout_seconds:g} s "
                                "([models] request_timeout_seconds)"
                            )
                        # Most events are a piece of text: no call, no list for them.
                        if type(event) is PartDeltaEvent and type(event.delta) is TextPartDelta:
                            if event.delta.content_delta:
                                streamed = True
                                yield TextChunk(event.delta.content_delta)
                            continue
                        for part in mapper.parts(event):
                            streamed = True
                            yield part
                    usage = to_usage(response.usage)
                if usage is not None:
                    yield UsageChunk(usage)
                return
            except Exception as exc:
                if not _is_model_failure(exc):
                    raise
                failure = classify(exc, self.endpoint, self.model)
                if failure.kind == "dropped" or (streamed and failure.retry):
                    if dropped >= DROPPED_RETRIES:
                        raise ProviderError(failure.message) from exc
                    dropped += 1
                    if streamed:
                        yield ResponseDiscarded(
                            f"the connection to {self.endpoint.label} dropped mid-response; "
                            "what streamed is discarded and the turn is asked again"
                        )
                    continue
                wait = self._wait_before_retry(failure, retries)
                if wait is None:
                    if failure.kind == "context":
                        raise ContextTooLong(failure.message) from exc
                    raise ProviderError(failure.message) from exc
                retries += 1
                yield RetryNotice(
                    f"{self.endpoint.label}: {failure.short}; retrying in {wait:g} s "
                    f"(retry {retries} of {self.settings.max_retries})",
                    wait,
                )
                await anyio.sleep(wait)

    def _wait_before_retry(self, failure: Failure, retries: int) -> float | None:
        """Seconds to wait before asking again; None to give up."""
        if not failure.retry or retries >= self.settings.max_retries:
            return None
        wait = backoff(retries + 1, failure.wait)
        return wait if wait <= MAX_WAIT_SECONDS else None


def _import_sdk(kind: str) -> None:
    import pydantic_ai.direct

    if kind == "anthropic":
        import pydantic_ai.models.anthropic
    else:
        import pydantic_ai.models.openai  # noqa: F401


def _is_model_failure(exc: BaseException) -> bool:
    from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior

    return isinstance(exc, ModelAPIError | UnexpectedModelBehavior)


def _build_model(endpoint: Endpoint, model: str, timeout: float) -> tuple[Model, Any]:
    """The pydantic-ai model for ``endpoint`` and its SDK client, which never
    retries by itself (Sparrow's retries are visible and cancellable)."""
    if endpoint.kind == "anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        # The SDK's timeout bounds each wait on the socket: a server that stalls mid-answer.
        client = AsyncAnthropic(
            api_key=endpoint.api_key, base_url=endpoint.base_url, max_retries=0, timeout=timeout
        )
        return AnthropicModel(model, provider=AnthropicProvider(anthropic_client=client)), client

    from openai import AsyncOpenAI
    from pydantic_ai.providers.openai import OpenAIProvider

    openai_client = AsyncOpenAI(
        api_key=endpoint.api_key, base_url=endpoint.base_url, max_retries=0, timeout=timeout
    )
    provider = OpenAIProvider(openai_client=openai_client)
    if endpoint.kind == "openai":
        from pydantic_ai.models.openai import OpenAIResponsesModel

        return OpenAIResponsesModel(model, provider=provider), openai_client
    from pydantic_ai.models.openai import OpenAIChatModel

    return OpenAIChatModel(model, provider=provider), openai_client
