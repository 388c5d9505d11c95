"""Where a command's runs run: the registered executors (``EXECUTORS``: ``local``, ``ray`` and any plug-in's) and
the one interface each implements (ragdive.executors.base). ``ragdive.executors.ray`` distributes a sweep's runs as
Ray actors and ``ray_shards`` the parts of one run (the optional extra ``ray``), imported only when chosen, so
``import ragdive`` never pays for Ray. The API chooses an executor by name (`check_executor(name, ...).make(request)`),
never by testing the name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ConfigError
from ..registry import Registry, did_you_mean, import_entry
from .base import Executor, ExecutorRequest, ExperimentJob


@dataclass(frozen=True)
class ExecutorType:
    """A registered executor: ``open`` makes it for one command (an `Executor` from an `ExecutorRequest`; a lazy
    ``"module:attr"`` string imports it only when chosen). ``distributed`` executors take a cluster ``address``
    and split one run into ``shards``; the others refuse both."""

    summary: str
    open: Callable[[ExecutorRequest], Executor] | str
    distributed: bool = False

    def make(self, request: ExecutorRequest) -> Executor:
        opener = import_entry(self.open) if isinstance(self.open, str) else self.open
        return opener(request)  # type: ignore[no-any-return]


EXECUTORS: Registry[ExecutorType] = Registry(
    "executors",
    noun="executor",
    builtins={
        "local": ExecutorType("this process's event loop", Executor),
        "ray": ExecutorType(
            "Ray actors on a cluster or a local instance (extra `ray`)", "ragdive.executors.ray:open_ray", True
        ),
    },
)
"""The executors by name (a plug-in's from the entry-point group ``ragdive.executors``: an `ExecutorType`)."""


def check_executor(name: str, address: str | None, shards: int | None = None) -> ExecutorType:
    """The command line's and the API's one check of an executor choice, before anything runs: the registered
    executor, whose ``make(request)`` opens it."""
    if name not in EXECUTORS:
        known = EXECUTORS.names()
        raise ConfigError(f"--executor {name}: choose {' or '.join(known)}{did_you_mean(name, known)}")
    chosen = EXECUTORS.get(name)
    if not chosen.distributed and address is not None:
        raise ConfigError(f"--address is for --executor {_distributed()}")
    if not chosen.distributed and shards is not None:
        raise ConfigError(f"--shards is for --executor {_distributed()}")
    if shards is not None and shards < 1:
        raise ConfigError(f"--shards {shards}: at least 1")
    return chosen


def _distributed() -> str:
    return " or ".join(n for n in EXECUTORS.names() if EXECUTORS.get(n).distributed)


__all__ = [
    "EXECUTORS",
    "Executor",
    "ExecutorRequest",
    "ExecutorType",
    "ExperimentJob",
    "check_executor",
]
