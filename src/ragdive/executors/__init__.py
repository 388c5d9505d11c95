"""Where a sweep's runs (and the parts of one large run) run. The LocalExecutor (this event loop) lives beside the
sweep in ragdive.pipeline.sweep; ``ragdive.executors.ray`` distributes runs as Ray actors and ``ray_shards`` the
parts of one run (the optional extra ``ray``), imported only when asked for, so ``import ragdive`` never pays for
Ray."""

from __future__ import annotations

from ..errors import ConfigError

EXECUTORS = ("local", "ray")


def check_executor(name: str, address: str | None, shards: int | None = None) -> None:
    """The command line's and the API's one check of an executor choice, before anything runs."""
    if name not in EXECUTORS:
        raise ConfigError(f"--executor {name}: choose local or ray")
    if name != "ray" and address is not None:
        raise ConfigError("--address is for --executor ray")
    if name != "ray" and shards is not None:
        raise ConfigError("--shards is for --executor ray")
    if shards is not None and shards < 1:
        raise ConfigError(f"--shards {shards}: at least 1")
