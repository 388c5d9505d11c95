"""Errors by blame.

Who caused a failure decides how it is shown: a user's mistake (ConfigError, a missing run) is one readable
line and exit code 2; a failing model, target or judge carries what is needed to act on it (provider, status,
the raw text); anything else is a bug and gets a short hint plus the traceback under ``--debug``.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager


class RagdiveError(Exception):
    """Base of every error ragdive raises on purpose."""

    #: exit code the CLI uses when this error reaches it
    exit_code: int = 2


class WorkerFailed(RagdiveError):
    """A part of a run split among workers failed (its worker died, or its own pipeline failed); the message names
    each part's error. The other parts ran to their end, and the run resumes."""


class ConfigError(RagdiveError):
    """The user's configuration or command line is wrong: fix the input and run again."""


class StoreError(RagdiveError):
    """A run directory is missing, unreadable or not a ragdive run."""


class StorageError(StoreError):
    """The disk refused a write (full, a file-size limit, read-only, no permission): the user's environment, not a
    bug. One line naming the path and the cause; what was finished is on disk and ``--resume`` continues once the
    cause is fixed."""


STORAGE_CAUSES = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large (a file-size limit: ulimit -f, or the filesystem's)",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}
"""The causes a user fixes outside ragdive (free space, raise a limit, remount, change permissions)."""


def is_storage_error(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in STORAGE_CAUSES


def storage_error(exc: OSError, path: object = None, action: str = "cannot write") -> StorageError:
    """One line: what could not be done, to which path, and why (ENOSPC, EROFS...)."""
    where = path if path is not None else (exc.filename or "a file")
    cause = STORAGE_CAUSES.get(exc.errno or 0) or (exc.strerror or type(exc).__name__).lower()
    code = errno.errorcode.get(exc.errno or 0)
    return StorageError(f"{action} {where}: {cause}" + (f" ({code})" if code else ""))


@contextmanager
def writing_to(path: object) -> Iterator[None]:
    """A full or read-only disk met while writing ``path`` (an export, a sheet) is a StorageError naming it:
    pyarrow's and csv's OSErrors carry no file name, so the line said only 'cannot write a file'."""
    try:
        yield
    except OSError as exc:
        if is_storage_error(exc):
            raise storage_error(exc, path) from exc
        raise


class ModelError(RagdiveError):
    """An LLM call failed after the model layer's retries."""

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.model = model
        self.status = status
        self.retryable = retryable
        #: seconds the server asked us to wait (Retry-After), when it said
        self.retry_after = retry_after


class ModelOutputError(ModelError):
    """The model answered, but not with what the schema asked for (after repair and one retry).

    ``raw`` keeps the text so callers can record it: a judge turns this into an *unscored* result, never 0.
    """

    def __init__(self, message: str, *, raw: str, usage: object = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.raw = raw
        #: tokens the failed attempts spent (a records.Usage, when the model layer knows it): a failure is not free
        self.usage = usage


class ModelStopped(ModelError):
    """A role's model cannot answer at all (its process died, its credential was refused, or it failed
    ``stop_after_failures`` times in a row without one success): every further call would fail the same way, so
    this stops the run (status ``failed``, one line naming role, model, status and credential) instead of failing
    every remaining conversation or judge item one by one."""


class ModelCrashed(ModelStopped):
    """The model's process died (a native crash in a local model's worker). Every further call would die the
    same way, so this stops the run (status ``failed``) instead of failing one conversation or judge item."""

    def __init__(self, message: str, *, worker_exit: int | None = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.worker_exit = worker_exit  # negative: the signal that killed it


class BudgetExceeded(ModelError):
    """The run's cost or token budget is spent; the run stops cleanly with finished work saved."""


class TargetError(RagdiveError):
    """The RAG system under test failed to answer (unreachable, 5xx, unreadable body...)."""

    def __init__(self, message: str, *, status: int | None = None, body: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class JudgeError(RagdiveError):
    """A judge could not produce a score; metrics record it as unscored with this reason and ``kind``
    (judge_failed: the call failed; judge_unusable: it answered in the wrong shape or impossibly)."""

    def __init__(self, message: str, *, kind: str = "judge_failed") -> None:
        super().__init__(message)
        self.kind = kind
