"""One retry policy for everything ragdive calls out to: the model layer (models/) and the HTTP targets (targets/).

Neutral ground on purpose: the layering keeps targets and models apart as peers, and a second copy of the backoff
arithmetic is how the two drifted before (the targets' retries ignored Retry-After and had no jitter). What counts
as retryable is the caller's business (a ModelError says so itself; an HTTP target looks at the status); how long
to wait, and how often, is decided here.

Retryable statuses: 408, 409, 429 and every 5xx. Never retried: 400, 401, 403, 404 and other client errors —
sending the same bad request again cannot help and wastes quota.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from time import time

RETRYABLE_STATUS = frozenset({408, 409, 429})


def status_is_retryable(status: int | None) -> bool:
    return status is not None and (status in RETRYABLE_STATUS or status >= 500)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    backoff_s: float = 1.0
    """Wait before the first retry; doubles each retry."""
    max_backoff_s: float = 60.0
    max_retry_after_s: float = 300.0
    """A server's Retry-After is honoured up to this."""

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based).

        Retry-After wins when the server gave one (a little jitter on top so many clients don't return in
        lockstep); otherwise exponential backoff with "equal jitter": half fixed, half random.
        """
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after_s) * (1 + 0.1 * random.random())
        ceiling = min(self.max_backoff_s, self.backoff_s * (2**attempt))
        return ceiling / 2 + random.random() * ceiling / 2


def parse_retry_after(headers: object) -> float | None:
    """Seconds from ``retry-after-ms`` / ``Retry-After`` (delta seconds or an HTTP date); None if absent/bad."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    millis = get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time())
    except (TypeError, ValueError):
        return None
