"""The local model's self-check before a run: one tiny decode in each distinct local worker, so a broken
llama.cpp build is found in seconds, before anything is simulated or scored (and before money is spent on the
other roles). Backends opt in with an async ``self_check()``; remote backends have none and are not called.
A worker is checked once per process (per worker pid): the pipeline's judge check does not repeat the
simulation's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .model import Model

_checked: set[tuple[int, int | None]] = set()


async def check_local_models(models: Iterable[Model | Any]) -> list[Any]:
    """Run each local backend's self-check once; a crash raises ModelCrashed (naming cause and fix). Returns
    the checks that ran."""
    results = []
    seen: set[int] = set()
    for model in models:
        backend = getattr(model, "backend", None)  # the Ragas judge is no Model wrapper: it has none
        check = getattr(backend, "self_check", None)
        worker = getattr(backend, "worker", None)
        if check is None or worker is None:
            continue
        process = worker()
        if id(process) in seen or (id(process), process.pid) in _checked:
            continue
        seen.add(id(process))
        results.append(await check())
        _checked.add((id(process), process.pid))
    return results
