"""One Chat Completions call with tool calling, retried visibly.

The SDK's own retries are off (`max_retries=0`) so that every retry goes through
`on_retry` and ends up in the transcript.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable

import openai

_RETRYABLE_STATUS = {408, 409, 429}


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text exactly as the model produced it


@dataclass(frozen=True)
class Reply:
    content: str | None
    tool_calls: list[ToolCall]
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int
    base_delay: float
    max_delay: float = 30.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = min(self.max_delay, self.base_delay * 2**attempt) * random.uniform(0.75, 1.0)
        if retry_after is not None:
            backoff = max(backoff, min(retry_after, self.max_delay))
        return backoff


class ApiError(Exception):
    """The endpoint failed in a way that retrying did not (or cannot) fix."""


class DeadlineReached(Exception):
    """The wall-time limit leaves no room for another call or retry."""


class _EmptyResponse(Exception):
    pass


class ChatModel:
    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        call_timeout: float,
        retry: RetryPolicy,
        on_retry: Callable[[str], None],
    ) -> None:
        self.model = model
        self.call_timeout = call_timeout
        self.retry = retry
        self.on_retry = on_retry
        self.failed_calls = 0
        # Local OpenAI-compatible servers often need no key, but the SDK insists on one.
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "no-key", max_retries=0, timeout=call_timeout
        )

    def complete(self, messages: list[dict], tools: list[dict], deadline: float) -> Reply:
        """Ask for the next assistant message; raises ApiError or DeadlineReached."""
        attempt = 0
        while True:
            timeout = min(self.call_timeout, deadline - time.monotonic())
            if timeout <= 0:
                raise DeadlineReached("wall-time limit reached before the model call")
            try:
                response = self._client.chat.completions.create(
                    model=self.model, messages=messages, tools=tools, timeout=timeout
                )
                return _to_reply(response)
            except (openai.APIConnectionError, openai.APIStatusError, _EmptyResponse) as error:
                self.failed_calls += 1
                problem = _describe(error)
                if not _is_retryable(error):
                    raise ApiError(problem) from error
                if attempt >= self.retry.max_retries:
                    raise ApiError(f"{problem} (gave up after {attempt} retries)") from error
                pause = self.retry.delay(attempt, _retry_after(error))
                if time.monotonic() + pause >= deadline:
                    raise DeadlineReached(f"{problem}; no wall time left to retry") from error
                attempt += 1
                self.on_retry(
                    f"{problem}; retry {attempt}/{self.retry.max_retries} in {pause:.1f} s"
                )
                time.sleep(pause)


def _to_reply(response) -> Reply:
    if not response.choices:
        raise _EmptyResponse("response has no choices")
    choice = response.choices[0]
    message = choice.message
    tool_calls = []
    for index, call in enumerate(message.tool_calls or []):
        function = getattr(call, "function", None)
        tool_calls.append(
            ToolCall(
                id=call.id or f"call_{index}",
                # A non-function tool call has no function; the empty name gets an
                # "unknown tool" answer rather than a crash.
                name=function.name if function else "",
                arguments=function.arguments if function else "",
            )
        )
    usage = response.usage
    prompt_tokens = (usage.prompt_tokens or 0) if usage else 0
    completion_tokens = (usage.completion_tokens or 0) if usage else 0
    total_tokens = (usage.total_tokens or 0) if usage else 0
    return Reply(
        content=message.content,
        tool_calls=tool_calls,
        finish_reason=choice.finish_reason,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=total_tokens or prompt_tokens + completion_tokens,
    )


def _is_retryable(error: Exception) -> bool:
    if isinstance(error, openai.APIStatusError):
        return error.status_code in _RETRYABLE_STATUS or error.status_code >= 500
    return True  # connection errors, timeouts (APITimeoutError), empty responses


def _describe(error: Exception) -> str:
    if isinstance(error, openai.APITimeoutError):
        return "model call timed out"
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {error.message}"
    if isinstance(error, openai.APIConnectionError):
        return f"connection error: {error.__cause__ or error}"
    return str(error)


def _retry_after(error: Exception) -> float | None:
    if not isinstance(error, openai.APIStatusError):
        return None
    try:
        return float(error.response.headers.get("retry-after", ""))
    except ValueError:
        return None
