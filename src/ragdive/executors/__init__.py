"""Where a sweep's runs (and the parts of one large run) run. The LocalExecutor (this event loop) lives beside the
sweep in ragdive.pipeline.sweep; ``ragdive.executors.ray`` distributes runs as Ray actors and ``ray_shards`` the
parts of one run (the optional extra ``ray``), imported only when asked for, so ``import ragdive`` never pays for
Ray."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from ..registry import Registry, did_you_mean


@dataclass(frozen=True)
class Executor:
    """Where runs run: ``distributed`` executors take a cluster ``address`` and split a run into ``shards``."""

    name: str
    summary: str
    distributed: bool = False


EXECUTORS: Registry[Executor] = Registry(
    "executors",
    noun="executor",
    builtins={
        "local": Executor("local", "this process's event loop"),
        "ray": Executor("ray", "Ray actors on a cluster or a local instance (extra `ray`)", distributed=True),
    },
)
"""The executors by name. Only the built-in two can run today: the run lifecycle calls each by name (a plug-in
executor is listed and checked, but needs the lifecycle's executor interface, which is not public yet)."""


def check_executor(name: str, address: str | None, shards: int | None = None) -> None:
    """The command line's and the API's one check of an executor choice, before anything runs."""
    if name not in EXECUTORS.builtin_names():
        known = EXECUTORS.builtin_names()
        raise ConfigError(f"--executor {name}: choose {' or '.join(known)}{did_you_mean(name, known)}")
    distributed = EXECUTORS.get(name).distributed
    if not distributed and address is not None:
        raise ConfigError(f"--address is for --executor {_distributed()}")
    if not distributed and shards is not None:
        raise ConfigError(f"--shards is for --executor {_distributed()}")
    if shards is not None and shards < 1:
        raise ConfigError(f"--shards {shards}: at least 1")


def _distributed() -> str:
    return " or ".join(n for n in EXECUTORS.builtin_names() if EXECUTORS.get(n).distributed)
