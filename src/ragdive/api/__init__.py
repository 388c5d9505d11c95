"""The Python API, the one way into the pipeline: the command line, notebooks and the pytest plugin all stand on it.

One typed function per use case, each as a coroutine (``a...``) and a sync form: `run`, `simulate`, `evaluate`,
`static`, `replay`, `sweep`; and `compare`, `load_run`, `list_runs`, `import_run`, `gate`, `assert_gate`, which
read runs. Every use case that works takes one ``observer`` (an `Observer`) for its progress; configs take one
override form, dotted config paths as a sweep's axes: ``run("exp.yaml", {"simulation.concurrency": 2})``.

The sync forms are this API's edge, as one ``asyncio.run`` per command is the command line's: outside an event
loop they run one; inside a running one (a Jupyter notebook) they run the coroutine in a fresh thread with its own
loop and wait for it, so they work there too, without nest_asyncio.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..sync_edge import run_sync
from .configs import ConfigLike, Overrides, load_experiment
from .observer import Observer
from .reading import assert_gate, compare, gate, import_run, list_runs, load_run
from .results import Comparison, MetricResult, RunResult, ScoringResult, SweepResult
from .runs import aevaluate, areplay, arun, asimulate, astatic
from .sweeps import PlannedSweep, asweep, plan_sweep

__all__ = [
    "Comparison",
    "ConfigLike",
    "MetricResult",
    "Observer",
    "Overrides",
    "PlannedSweep",
    "RunResult",
    "ScoringResult",
    "SweepResult",
    "aevaluate",
    "areplay",
    "arun",
    "asimulate",
    "assert_gate",
    "astatic",
    "asweep",
    "compare",
    "evaluate",
    "gate",
    "import_run",
    "list_runs",
    "load_experiment",
    "load_run",
    "plan_sweep",
    "replay",
    "run",
    "simulate",
    "static",
    "sweep",
]


def run(
    config: ConfigLike,
    overrides: Overrides | None = None,
    *,
    models: Sequence[str] | str = (),
    conversations: int | None = None,
    max_turns: int | None = None,
    repeat: int | None = None,
    output: str | Path | None = None,
    resume: str | Path | None = None,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    executor: str = "local",
    address: str | None = None,
    shards: int | None = None,
    observer: Observer | None = None,
) -> RunResult:
    """`arun`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(
        lambda: arun(
            config,
            overrides,
            models=models,
            conversations=conversations,
            max_turns=max_turns,
            repeat=repeat,
            output=output,
            resume=resume,
            no_cache=no_cache,
            cache_dir=cache_dir,
            executor=executor,
            address=address,
            shards=shards,
            observer=observer,
        )
    )


def simulate(
    config: ConfigLike,
    overrides: Overrides | None = None,
    *,
    models: Sequence[str] | str = (),
    conversations: int | None = None,
    max_turns: int | None = None,
    repeat: int | None = None,
    output: str | Path | None = None,
    resume: str | Path | None = None,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    observer: Observer | None = None,
) -> RunResult:
    """`asimulate`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(
        lambda: asimulate(
            config,
            overrides,
            models=models,
            conversations=conversations,
            max_turns=max_turns,
            repeat=repeat,
            output=output,
            resume=resume,
            no_cache=no_cache,
            cache_dir=cache_dir,
            observer=observer,
        )
    )


def evaluate(
    run_dir: str | Path,
    *,
    config: ConfigLike | None = None,
    models: Sequence[str] | str = (),
    metrics: Sequence[str] | str | None = None,
    concurrency: int | None = None,
    retry_failed: bool = False,
    rescore_changed: bool = False,
    observer: Observer | None = None,
) -> RunResult:
    """`aevaluate`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(
        lambda: aevaluate(
            run_dir,
            config=config,
            models=models,
            metrics=metrics,
            concurrency=concurrency,
            retry_failed=retry_failed,
            rescore_changed=rescore_changed,
            observer=observer,
        )
    )


def static(
    dataset: str | Path,
    config: ConfigLike,
    overrides: Overrides | None = None,
    *,
    models: Sequence[str] | str = (),
    metrics: Sequence[str] | str | None = None,
    limit: int | None = None,
    per_document: int | None = None,
    output: str | Path | None = None,
    resume: str | Path | None = None,
    evaluate: bool = True,
    observer: Observer | None = None,
) -> RunResult:
    """`astatic`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(
        lambda: astatic(
            dataset,
            config,
            overrides,
            models=models,
            metrics=metrics,
            limit=limit,
            per_document=per_document,
            output=output,
            resume=resume,
            evaluate=evaluate,
            observer=observer,
        )
    )


def replay(
    run_dir: str | Path,
    target: str | Path,
    *,
    models: Sequence[str] | str = (),
    metrics: Sequence[str] | str | None = None,
    output: str | Path | None = None,
    resume: str | Path | None = None,
    evaluate: bool = True,
    observer: Observer | None = None,
) -> RunResult:
    """`areplay`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(
        lambda: areplay(
            run_dir,
            target,
            models=models,
            metrics=metrics,
            output=output,
            resume=resume,
            evaluate=evaluate,
            observer=observer,
        )
    )


def sweep(
    config: str | Path | Mapping[str, Any],
    *,
    output: str | Path | None = None,
    resume: bool = False,
    arrow: str = "absolute:0.05",
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    executor: str = "local",
    address: str | None = None,
) -> SweepResult:
    """`asweep`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(
        lambda: asweep(
            config,
            output=output,
            resume=resume,
            arrow=arrow,
            no_cache=no_cache,
            cache_dir=cache_dir,
            executor=executor,
            address=address,
        )
    )
