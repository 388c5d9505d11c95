"""When to retry a failed model call; how long to wait is the shared policy in ragdive.retrying.

Retried: 429, 408/409, 5xx, timeouts, connection errors and unreadable response bodies (a ModelError with
``retryable=True`` from a backend, or the built-in TimeoutError/ConnectionError). Never retried: 400, 401, 403,
404 and other client errors. Exceptions that are not model failures (a bug, a test double's RuntimeError) are not
retried and pass through unchanged.
"""

from __future__ import annotations

from ..errors import ModelError
from ..retrying import RETRYABLE_STATUS, RetryPolicy, parse_retry_after, status_is_retryable

__all__ = [
    "RETRYABLE_STATUS",
    "RetryPolicy",
    "is_retryable",
    "parse_retry_after",
    "retry_after_of",
    "status_is_retryable",
]


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, ModelError):
        return exc.retryable
    return isinstance(exc, TimeoutError | ConnectionError)


def retry_after_of(exc: BaseException) -> float | None:
    return exc.retry_after if isinstance(exc, ModelError) else None
