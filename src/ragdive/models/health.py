"""The model stop rule, the twin of the target's (ragdive.targets.watch): a role whose model fails
``stop_after_failures`` requests (each after the model layer's retries) without one success in the session is
down, not flaky, and a refused credential (HTTP 401/403) will be refused on every call. A model that answered
before is not stopped by later failures: with many calls in flight the slow failing ones finish last and would
look like a streak (measured: 50 % transport faults with hangs stopped a healthy judge under a streak rule).
Either stops the run with one line naming the role, the model, the HTTP status and where the credential came
from as configured, instead of failing every remaining conversation (or marking every remaining judge item
unscored) one by one.

Counted per (role, model) over one run's session; requests in flight when the rule trips fail with the same line.
"""

from __future__ import annotations

from ..config.models import ModelSpec
from ..errors import ModelError, ModelStopped

AUTH_STATUSES = frozenset({401, 403})


def credential_source(spec: ModelSpec, backend_env: str | None) -> str:
    """Where the key came from, as the user configured it: never a guessed variable, never the key."""
    if spec.api_key_from_env:  # worded so no "api_key: value" reads as a secret to mask
        return f"{spec.api_key_from_env} (api_key in the model's config)"
    if spec.api_key:
        return "api_key in the model's config"
    if spec.api_key_env:
        return f"api_key_env: {spec.api_key_env}"
    if backend_env:
        return f"the environment variable {backend_env} (the provider's default; no key in the config)"
    return "no credential configured"


class ModelHealth:
    """Consecutive failed requests of one role's model; ``failed`` returns the ModelStopped to raise once the
    rule trips (and every later call of this role raises it too)."""

    def __init__(self, role: str | None, spec: ModelSpec, backend_env: str | None) -> None:
        self.role = role or "-"
        self.spec = spec
        self.backend_env = backend_env
        self.in_a_row = 0
        self.answered = False
        self.stopped: ModelStopped | None = None

    def succeeded(self) -> None:
        self.in_a_row = 0
        self.answered = True

    def failed(self, error: BaseException) -> ModelStopped | None:
        if self.stopped is not None:
            return self.stopped
        self.in_a_row += 1
        status = getattr(error, "status", None)
        refused = status in AUTH_STATUSES
        if not refused and (self.answered or self.in_a_row < self.spec.stop_after_failures):
            return None
        self.stopped = self._stop(error, status, refused)
        return self.stopped

    def _stop(self, error: BaseException, status: int | None, refused: bool) -> ModelStopped:
        http = f"HTTP {status}" if status is not None else _kind(error)
        if refused:
            why = f"its credential was refused ({http})"
        else:
            why = f"it failed {self.in_a_row} requests without one success (last: {http})"
        credential = credential_source(self.spec, self.backend_env)
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return ModelStopped(
            f"the {self.role} model {self.spec.model} stopped the run: {why}; credential: {credential}. "
            f"Finished work is saved; fix it and resume the run. Last error: {first}",
            provider=self.spec.provider,
            model=self.spec.model,
            status=status,
        )


def _kind(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, ModelError) and error.retryable:
        return "transport failure"
    return type(error).__name__
