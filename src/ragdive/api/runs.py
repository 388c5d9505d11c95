"""The use cases that make or add to one run: `arun`, `asimulate`, `aevaluate`, `astatic`, `areplay` (and their
sync forms in ragdive.api). Each opens one AsyncExitStack, so every model, target and cache it built is closed
once, however it ends; each run's status is its run session's (ragdive.store.session)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import ExperimentConfig
from ..store import RunStore
from .configs import ConfigLike, Overrides, load_experiment, with_roles
from .observer import Observer
from .results import RunResult, run_result

if TYPE_CHECKING:
    from ..pipeline import AskingHooks


async def arun(
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
    """Simulate, then score, into one run directory (`ragdive run`). A spent budget returns status
    ``budget_exceeded`` with the finished work kept; continue with ``resume=result.run_dir``. ``executor``: a
    registered executor's name (ragdive.executors.EXECUTORS); with ``"ray"`` the conversations are split into
    ``shards`` parts on Ray workers (``address``: a cluster, else a local instance), as `ragdive run --executor ray`;
    a part that failed raises WorkerFailed."""
    from ..executors import ExecutorRequest, ExperimentJob, check_executor
    from ..pipeline import RunOptions, prepare_experiment

    chosen = check_executor(executor, address, shards).make(ExecutorRequest(address=address, shards=shards))
    experiment = load_experiment(
        config, overrides, models=models, conversations=conversations, max_turns=max_turns, repeat=repeat
    )
    observer, sinks = live_sinks(experiment, observer or Observer())
    options = RunOptions(
        output=_path(output), resume=_path(resume), no_cache=no_cache, cache_dir=cache_dir, observer=observer
    )
    async with AsyncExitStack() as resources:
        for sink in sinks:  # closed last: every span sent and the MLflow run ended when arun returns
            resources.callback(sink.close)
        resources.callback(chosen.close)
        line = chosen.start()  # before the run exists: a missing extra or a wrong address leaves no run behind
        if line:
            observer.note(line)
        prepared = await prepare_experiment(experiment, resources, options)
        _created(observer, prepared.store, prepared.simulation.corpus)
        job = ExperimentJob(experiment, prepared, options, observer.scoring_started, observer.scored)
        outcome = await chosen.run_experiment(job)
    scored = outcome.metrics if outcome.stage == "evaluation" else None
    return run_result(outcome.store, scored, outcome.error, scoring=outcome.evaluation)


async def asimulate(
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
    """Simulate conversations only (`ragdive simulate`); score them later with `evaluate`."""
    from ..pipeline import RunOptions, prepare_run, run_simulation

    experiment = load_experiment(
        config, overrides, models=models, conversations=conversations, max_turns=max_turns, repeat=repeat
    )
    observer = observer or Observer()
    options = RunOptions(
        output=_path(output), resume=_path(resume), no_cache=no_cache, cache_dir=cache_dir, observer=observer
    )
    async with AsyncExitStack() as resources:
        prepared = await prepare_run(experiment, resources, options)
        _created(observer, prepared.store, prepared.corpus)
        outcome = await run_simulation(prepared)
    return run_result(prepared.store, None, outcome.error)


async def aevaluate(
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
    """Score an existing run directory (`ragdive evaluate`): resumable, items already scored are skipped. The
    judge comes from ``config`` when given, else from the run's manifest; ``models`` overrides it."""
    from ..pipeline import score_run, scoring_settings

    given = load_experiment(config) if config is not None else None
    settings = with_roles(scoring_settings(Path(run_dir), given), models)
    observer = observer or Observer()
    async with AsyncExitStack() as resources:
        outcome = await score_run(
            Path(run_dir),
            resources,
            settings,
            alarm_limits=given.evaluation.alarms if given is not None else None,
            metrics=_names(metrics),
            concurrency=concurrency,
            retry_failed=retry_failed,
            rescore_changed=rescore_changed,
            on_start=observer.scoring_started,
            on_score=observer.scored,
        )
    return run_result(outcome.store, outcome.metrics, scoring=outcome.result)


async def astatic(
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
    """Static mode (`ragdive static`): every question of ``dataset`` (CSV or JSONL with question and answer) asked
    once of ``config``'s target, then (``evaluate``) scored with the single-turn metrics, into a run of kind
    ``static``. ``per_document``: up to N questions about each seed document of the config's conversations (the
    paper's Table 5 static arm)."""
    from ..pipeline import run_static

    experiment = load_experiment(config, overrides, models=models)
    observer = observer or Observer()
    async with AsyncExitStack() as resources:
        outcome = await run_static(
            experiment,
            Path(dataset),
            resources,
            metrics=_names(metrics),
            limit=limit,
            per_document=per_document,
            output=_path(output),
            resume=_path(resume),
            evaluate=evaluate,
            hooks=_asking_hooks(observer),
        )
    scored = outcome.metrics if outcome.evaluation is not None else None
    return run_result(
        outcome.store, scored, scoring=outcome.evaluation, sent=outcome.asked, target_errors=outcome.errors
    )


async def areplay(
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
    """Frozen-user replay (`ragdive replay`): ``run_dir``'s recorded user messages sent to the target of the YAML
    file ``target``, into a new run of kind ``replay`` (or ``resume``'s), scored unless ``evaluate=False``. Pair it
    with its source in `compare`. Later turns were written in reaction to the source's answers: see the README."""
    from ..pipeline import replay_settings, run_replay

    settings = with_roles(replay_settings(Path(run_dir), Path(target)), models)
    observer = observer or Observer()
    async with AsyncExitStack() as resources:
        outcome = await run_replay(
            Path(run_dir),
            settings,
            resources,
            metrics=_names(metrics),
            output=_path(output),
            resume=_path(resume),
            evaluate=evaluate,
            hooks=_asking_hooks(observer),
        )
    return run_result(
        outcome.store,
        outcome.metrics if outcome.evaluation is not None else None,
        outcome.error,
        scoring=outcome.evaluation,
        sent=outcome.replayed,
        target_errors=outcome.errors,
        source_dir=outcome.source.path,
    )


def live_sinks(experiment: ExperimentConfig, observer: Observer) -> tuple[Observer, list[Any]]:
    """The caller's observer wrapped by the live sinks the config asks for (`observability`), and the sinks."""
    sinks: list[Any] = []
    settings = experiment.observability
    if settings.otlp_endpoint:
        from .live_traces import LiveTraces

        observer = LiveTraces(observer, settings.otlp_endpoint)
        sinks.append(observer)
    if settings.mlflow_tracking_uri:
        from .live_mlflow import LiveMlflow

        observer = LiveMlflow(observer, settings.mlflow_tracking_uri, settings.mlflow_experiment)
        sinks.append(observer)
    return observer, sinks


def _asking_hooks(observer: Observer) -> AskingHooks:
    """Static mode's and replay's progress, told to the observer."""
    from ..pipeline import AskingHooks

    return AskingHooks(
        on_created=lambda store, total: observer.run_created(store.path, total),
        on_answer=observer.answered,
        on_scoring=observer.scoring_started,
        on_score=observer.scored,
    )


def _created(observer: Observer, store: RunStore, corpus: object) -> None:
    observer.run_created(store.path)
    line = getattr(corpus, "line", None)
    if line is not None:
        observer.note(line())


def _names(metrics: Sequence[str] | str | None) -> str | None:
    """``["a", "b"]`` (or ``"a,b"``, as on the command line) as the pipeline's ``a,b``."""
    if not metrics:
        return None
    return metrics if isinstance(metrics, str) else ",".join(metrics)


def _path(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)
