"""What the stub server does with one request, and what it remembers of it."""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

FaultKind = Literal["ok", "status", "hang", "reset", "garbage", "bad_content", "truncated", "wrong_shape"]


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

    @classmethod
    def reset(cls) -> Fault:
        """Start a 200 answer, then drop the connection before the body is complete (a peer reset mid-reply)."""
        return cls("reset")

    @classmethod
    def truncated(cls) -> Fault:
        """A well-formed completion whose JSON content is cut off halfway (a reply stopped by max_tokens)."""
        return cls("truncated")

    @classmethod
    def wrong_shape(cls, text: str = '{"unexpected": true}') -> Fault:
        """A well-formed completion whose content is valid JSON without the fields the request asked for."""
        return cls("wrong_shape", body=text)

    @property
    def family(self) -> str:
        """transport (the HTTP exchange failed) or content (the exchange worked, the model's text is unusable)."""
        return "content" if self.kind in CONTENT_KINDS else "transport" if self.kind != "ok" else "ok"


CONTENT_KINDS = frozenset({"bad_content", "truncated", "wrong_shape"})


@dataclass(frozen=True)
class FaultRates:
    """Random faults: each request draws a transport fault with probability ``transport``, else a content fault
    with probability ``content``; the kind within a family is drawn uniformly. Seeded, so a harness run is
    repeatable in which requests fail (given the same request order)."""

    transport: float = 0.0
    content: float = 0.0
    seed: int = 0
    hang_s: float = 5.0
    """How long a hang lasts: past the client's timeout, so the client gives up first."""
    retry_after_s: float = 0.05

    def transport_faults(self) -> list[Fault]:
        return [
            Fault.rate_limited(retry_after=self.retry_after_s),
            Fault.error(500),
            Fault.error(503, "service unavailable"),
            Fault.hang(self.hang_s),
            Fault.reset(),
            Fault.garbage(),
        ]

    def content_faults(self) -> list[Fault]:
        return [Fault.bad_content(), Fault.truncated(), Fault.wrong_shape()]

    def draw(self, rng: random.Random) -> Fault:
        roll = rng.random()
        if roll < self.transport:
            return rng.choice(self.transport_faults())
        if roll < self.transport + self.content:
            return rng.choice(self.content_faults())
        return Fault.ok()


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


def rates_to_dict(rates: FaultRates) -> dict[str, Any]:
    return asdict(rates)
