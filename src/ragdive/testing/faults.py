"""What the stub server does with one request, and what it remembers of it."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

FaultKind = Literal["ok", "status", "hang", "garbage", "bad_content"]


@dataclass(frozen=True)
class Fault:
    """What the server does with one request."""

    kind: FaultKind = "ok"
    status: int = 200
    retry_after: float | None = None
    seconds: float = 0.0
    body: str = ""

    @classmethod
    def ok(cls, text: str | None = None) -> Fault:
        """A normal answer (``text`` overrides the reply function for this request)."""
        return cls("ok", body=text or "")

    @classmethod
    def rate_limited(cls, retry_after: float | None = 1.0) -> Fault:
        """429 Too Many Requests with a Retry-After header (seconds)."""
        return cls("status", status=429, retry_after=retry_after, body="rate limit reached")

    @classmethod
    def error(cls, status: int = 500, message: str = "internal error") -> Fault:
        """An HTTP error status with an OpenAI-style error body."""
        return cls("status", status=status, body=message)

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Fault:
        """Accept the request and answer nothing for ``seconds`` (past the client's timeout)."""
        return cls("hang", seconds=seconds)

    @classmethod
    def garbage(cls, body: str = "<html>502 Bad Gateway</html>{") -> Fault:
        """200 with a body that is not JSON at all (a broken proxy)."""
        return cls("garbage", body=body)

    @classmethod
    def bad_content(cls, text: str = "Sure! Here is the answer you wanted.") -> Fault:
        """A well-formed completion whose message is not the JSON the client asked for."""
        return cls("bad_content", body=text)


@dataclass
class ReceivedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    fault: Fault
    at: float = field(default_factory=time.monotonic)


def fault_to_dict(fault: Fault) -> dict[str, Any]:
    return asdict(fault)


def fault_from_dict(data: dict[str, Any]) -> Fault:
    return Fault(**data)
