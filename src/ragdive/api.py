"""The Python API, as first-class as the command line: `run`, `simulate`, `evaluate`, `sweep`, `replay` (and their
`a...` coroutine forms), `compare` and `import_run`, returning typed results instead of printing.

Each call opens one AsyncExitStack, as a command does, so every model, target and cache it built is closed once,
however it ends. The sync forms are this API's edge, as `asyncio.run` in `ragdive.cli` is the command line's:
outside an event loop they run one; inside a running one (a Jupyter notebook) they run the coroutine in a fresh
thread with its own loop and wait for it, so they work there too, without nest_asyncio.

Overrides are keyword arguments naming config paths, a double underscore for each dot (``seed=7``,
``simulation__concurrency=2``, ``output_dir="runs"``); ``models=["judge=openai/gpt-4o-mini"]``, ``conversations``
and ``max_turns`` are the command line's ``--model``, ``--conversations`` and ``--max-turns``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from .config import ExperimentConfig, load_config, validate_config
from .config.loader import format_validation_error
from .errors import ConfigError
from .records import Totals
from .store import RunStore
from .sync_edge import run_sync

T = TypeVar("T")
ConfigLike = ExperimentConfig | Mapping[str, Any] | str | Path


@dataclass(frozen=True)
class MetricResult:
    """One metric over a run: the mean of the scored items (unscored ones are not in it) and its 95 % CI."""

    metric: str
    mean: float | None
    ci: tuple[float, float] | None
    n_scored: int
    n_unscored: int


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    run_id: str
    status: str
    """finished, budget_exceeded, failed, interrupted (as in the manifest)."""
    totals: Totals
    metrics: dict[str, MetricResult] = field(default_factory=dict)
    """Per metric, in the run's order; empty for a run that was not scored."""
    error: str | None = None


@dataclass(frozen=True)
class Comparison:
    """One candidate configuration against the baseline (see `ragdive compare`)."""

    baseline: str
    candidate: str
    metrics: list[Any]
    """ragdive.analysis.MetricComparison per metric: means, band, change, paired test."""


def load_experiment(config: ConfigLike, **overrides: Any) -> ExperimentConfig:
    """A config from a path, a mapping or an ExperimentConfig, with overrides applied (a copy)."""
    if isinstance(config, str | Path):
        config = load_config(config)
    elif not isinstance(config, ExperimentConfig):
        config = validate_config(dict(config), ExperimentConfig, source="config")
    from .pipeline import with_overrides

    models = overrides.pop("models", None)
    models = [models] if isinstance(models, str) else models  # one binding, as one --model
    config = with_overrides(
        config,
        list(models or []),
        conversations=overrides.pop("conversations", None),
        max_turns=overrides.pop("max_turns", None),
    )
    if not overrides:
        return config
    data = config.model_dump()
    for key, value in overrides.items():
        *parents, leaf = key.split("__")
        node = data
        for part in parents:
            child = node.get(part)
            node[part] = child = dict(child) if isinstance(child, dict) else {}
            node = child
        node[leaf] = value
    try:
        return ExperimentConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, "overrides")) from exc


def _result(store: RunStore, metrics: Sequence[str] | None, error: str | None = None) -> RunResult:
    manifest = store.read_manifest()
    summary: dict[str, MetricResult] = {}
    if metrics:
        from .analysis import RunScores, summarize_run  # numpy/scipy: only once there is something to sum

        for s in summarize_run(RunScores.from_store(store), list(metrics)):
            summary[s.metric] = MetricResult(s.metric, s.mean, s.ci, s.n_scored, s.n_unscored)
    return RunResult(store.path, manifest.run_id, manifest.status, manifest.totals, summary, error or manifest.error)


async def arun(
    config: ConfigLike,
    *,
    output: str | Path | None = None,
    resume: str | Path | None = None,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    executor: str = "local",
    address: str | None = None,
    shards: int | None = None,
    **overrides: Any,
) -> RunResult:
    """Simulate, then score, into one run directory (`ragdive run`). A spent budget returns status
    ``budget_exceeded`` with the finished work kept; continue with ``resume=result.run_dir``. With
    ``executor="ray"`` the conversations are split into ``shards`` parts on Ray workers (``address``: a cluster,
    else a local instance), as `ragdive run --executor ray`; a part that failed raises WorkerFailed."""
    from .executors import check_executor
    from .pipeline import prepare_experiment, run_experiment

    check_executor(executor, address, shards)
    experiment = load_experiment(config, **overrides)
    async with AsyncExitStack() as resources:
        split = None
        if executor == "ray":
            from .executors.ray_shards import run_sharded, split_executor

            split = split_executor(address, shards)
            resources.callback(split[0].close)
        prepared = await prepare_experiment(
            experiment, resources, resume=_path(resume), output=_path(output), no_cache=no_cache, cache_dir=cache_dir
        )
        if split is not None:
            outcome = await run_sharded(experiment, prepared, *split, no_cache=no_cache, cache_dir=cache_dir)
        else:
            outcome = await run_experiment(prepared)
    return _result(outcome.store, outcome.metrics if outcome.stage == "evaluation" else None, outcome.error)


async def asimulate(
    config: ConfigLike,
    *,
    output: str | Path | None = None,
    resume: str | Path | None = None,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    **overrides: Any,
) -> RunResult:
    """Simulate conversations only (`ragdive simulate`); score them later with `evaluate`."""
    from .pipeline import run_simulation
    from .simulation import prepare_run

    experiment = load_experiment(config, **overrides)
    async with AsyncExitStack() as resources:
        prepared = await prepare_run(
            experiment, resources, resume=_path(resume), output=_path(output), no_cache=no_cache, cache_dir=cache_dir
        )
        outcome = await run_simulation(prepared)
    return _result(prepared.store, None, outcome.error)


async def aevaluate(
    run_dir: str | Path,
    *,
    config: ConfigLike | None = None,
    models: Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    concurrency: int | None = None,
    retry_failed: bool = False,
    rescore_changed: bool = False,
) -> RunResult:
    """Score an existing run directory (`ragdive evaluate`): resumable, items already scored are skipped. The
    judge comes from ``config`` when given, else from the run's manifest; ``models`` overrides it."""
    from .pipeline import score_run

    settings = load_experiment(config) if config is not None else None
    async with AsyncExitStack() as resources:
        outcome = await score_run(
            Path(run_dir),
            resources,
            models=list(models),
            config=settings,
            metrics=_names(metrics),
            concurrency=concurrency,
            retry_failed=retry_failed,
            rescore_changed=rescore_changed,
        )
    return _result(outcome.store, outcome.metrics)


@dataclass(frozen=True)
class SweepResult:
    sweep_dir: Path
    status: str
    """finished, or failed / budget_exceeded when a run did not finish (the others are kept)."""
    runs: dict[str, str]
    """Run id -> status; the run directories are ``sweep_dir / "runs" / run_id``."""
    tables: dict[str, Any]
    """Tables 2, 4 (and 5) as in the sweep's tables.json."""
    errors: dict[str, str] = field(default_factory=dict)


async def asweep(
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
    """Run a sweep (`ragdive sweep`): a path to its YAML or the sweep config as a mapping (a relative ``base``
    is then read from the current directory). ``resume=True`` continues the sweep in ``output``.
    ``executor="ray"`` runs its runs on Ray workers (``address``: a cluster, else a local instance)."""
    from .analysis.arrows import ArrowRule
    from .config.sweep import SweepConfig
    from .executors import check_executor
    from .pipeline.sweep import open_sweep, run_sweep, static_dataset_path
    from .pipeline.sweep_plan import plan_sweep

    check_executor(executor, address)
    rule = ArrowRule.parse(arrow)
    file = Path(config) if isinstance(config, str | Path) else None
    sweep = load_config(file, SweepConfig) if file else validate_config(dict(config), SweepConfig, source="sweep")  # type: ignore[arg-type]
    plan = plan_sweep(sweep, file)
    dataset = static_dataset_path(plan, file)
    directory = (
        Path(output)
        if output is not None
        else Path(sweep.output_dir) / (sweep.name or (file.stem if file else "sweep"))
    )
    runner = None
    if executor == "ray":  # started before the sweep directory: a missing extra or a wrong address leaves none
        from .executors.ray import RayExecutor

        runner = RayExecutor.for_plan(plan, address=address)
        runner.start()
    store = None
    try:
        store = open_sweep(plan, directory, resume=resume)
        outcome = await run_sweep(
            plan, store, static_dataset=dataset, no_cache=no_cache, cache_dir=cache_dir, arrow=rule, executor=runner
        )
    finally:
        if runner is not None:
            runner.close()
        if store is not None:
            store.release_lock()  # after the Ray driver's end: it wrote the sweep until then
    return SweepResult(store.path, outcome.status, dict(outcome.statuses), outcome.tables or {}, dict(outcome.errors))


def sweep(config: str | Path | Mapping[str, Any], **options: Any) -> SweepResult:
    """`asweep`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(lambda: asweep(config, **options))


async def areplay(
    run_dir: str | Path,
    target: str | Path,
    *,
    models: Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    output: str | Path | None = None,
    resume: str | Path | None = None,
    evaluate: bool = True,
) -> RunResult:
    """Frozen-user replay (`ragdive replay`): ``run_dir``'s recorded user messages sent to the target of the YAML
    file ``target``, into a new run of kind ``replay`` (or ``resume``'s), scored unless ``evaluate=False``. Pair it
    with its source in `compare`. Later turns were written in reaction to the source's answers: see the README."""
    from .pipeline import run_replay

    async with AsyncExitStack() as resources:
        outcome = await run_replay(
            Path(run_dir),
            Path(target),
            resources,
            models=list(models),
            metrics=_names(metrics),
            output=_path(output),
            resume=_path(resume),
            evaluate=evaluate,
        )
    return _result(outcome.store, outcome.metrics if outcome.evaluation is not None else None, outcome.error)


def run(config: ConfigLike, **options: Any) -> RunResult:
    """`arun`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(lambda: arun(config, **options))


def simulate(config: ConfigLike, **options: Any) -> RunResult:
    """`asimulate`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(lambda: asimulate(config, **options))


def evaluate(run_dir: str | Path, **options: Any) -> RunResult:
    """`aevaluate`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(lambda: aevaluate(run_dir, **options))


def replay(run_dir: str | Path, target: str | Path, **options: Any) -> RunResult:
    """`areplay`, waited for; works inside a running event loop (Jupyter) too."""
    return run_sync(lambda: areplay(run_dir, target, **options))


def compare(*runs: str | Path | Sequence[str | Path], metrics: Sequence[str] | None = None) -> list[Comparison]:
    """Each argument is one run directory or a list of repeated runs of one configuration; the first is the
    baseline. One Comparison per other configuration (`ragdive compare` prints the same numbers)."""
    from .analysis import RunScores, compare_configurations
    from .evaluation.metrics import LOWER_IS_BETTER  # the registry: which metrics improve downwards

    groups = [
        [RunScores.from_store(RunStore.open(Path(p))) for p in ([r] if isinstance(r, str | Path) else r)] for r in runs
    ]
    if len(groups) < 2 or not all(groups):
        raise ConfigError("compare needs a baseline and at least one other run, each with at least one directory")
    wanted = list(metrics) if metrics else None
    base = groups[0]
    return [
        Comparison(_name(base), _name(c), compare_configurations(base, c, wanted, lower_is_better=LOWER_IS_BETTER))
        for c in groups[1:]
    ]


def import_run(
    source_format: str,
    files: Sequence[str | Path],
    output: str | Path,
    *,
    name: str | None = None,
    rewrite: bool = False,
    config: ConfigLike | None = None,
    models: Sequence[str] = (),
) -> RunResult:
    """Import another tool's files (``ragdive-reference``, ``ragas``, ``deepeval`` or a ``chatlog``) as the run
    directory ``output`` (kind ``imported``; `ragdive import` does the same). Its scores are summarised as any
    run's. ``rewrite``: the user model (``config``'s models.user, or ``models=["user=provider/model"]``) writes a
    stand-alone question for every turn after the first, before anything is written."""
    from .interop.imports import ImportedRun
    from .interop.imports import import_run as write_imported

    prepare = None
    if rewrite:
        settings = load_experiment(config if config is not None else {}, models=list(models))

        def prepare(run: ImportedRun) -> None:
            from .pipeline.rewrite import rewrite_conversations

            outcome, model = run_sync(lambda: rewrite_conversations(run.conversations, settings, list(models)))
            run.invented = [i for i in run.invented if not i.startswith("stand-alone questions")]
            run.invented.append(
                f"stand-alone questions after the first turn: rewritten by the user model {model} "
                f"({outcome.rewritten} rewritten, {outcome.unchanged} already stood alone)"
            )
            if outcome.failed:
                shown = "; ".join((outcome.failures or [])[:3])
                run.notes.append(f"{outcome.failed} rewrite(s) failed, kept as sent: {shown}")

    store = write_imported(source_format, [Path(f) for f in files], Path(output), name=name, prepare=prepare)
    return _result(store, None)


def _name(runs: list[Any]) -> str:
    return str(runs[0].name) + (f" (+{len(runs) - 1} repeats)" if len(runs) > 1 else "")


def _names(metrics: Sequence[str] | None) -> str | None:
    """``["a", "b"]`` (or ``"a,b"``, as on the command line) as the pipeline's ``a,b``."""
    if not metrics:
        return None
    return metrics if isinstance(metrics, str) else ",".join(metrics)


def _path(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)


def gate(
    target: str | Path,
    rules: Mapping[str, str | Sequence[str]] | None = None,
    *,
    baseline: str | Path | None = None,
    max_drop: Mapping[str, float] | None = None,
) -> Any:
    """The CI gate (`ragdive gate`): ``target`` is a run, ``a,b,c`` repeats or a sweep directory; ``rules`` maps a
    metric to ">= 0.9", "<= 0.2 per turn", ">= 0.5 per conversation", ">= 0.9 in at least 4 of 5 repeats" (or a
    list of them); none given: the runs' own `evaluation.gate`. ``max_drop`` with ``baseline``: the largest drop
    per metric that fails only outside the paired test's CI. Returns a ragdive.gate.GateResult; no rule anywhere
    is a ConfigError (never a silent pass)."""
    from .config.gate import parse_gate
    from .evaluation.metrics import LOWER_IS_BETTER
    from .gate.use_case import gate_runs

    try:
        parsed = parse_gate({k: v if isinstance(v, str) else list(v) for k, v in (rules or {}).items()})
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return gate_runs(
        target, rules=parsed, baseline=baseline, max_drop=dict(max_drop or {}), lower_is_better=LOWER_IS_BETTER
    )


def assert_gate(
    result: RunResult | str | Path,
    *,
    baseline: str | Path | None = None,
    max_drop: Mapping[str, float] | None = None,
    **rules: str | float | Sequence[str],
) -> Any:
    """`gate` as an assertion, for tests: ``assert_gate(result, correctness=">= 0.9", faithfulness=0.8)`` (a
    number means ``>= number``). Raises AssertionError naming each failed metric, its value, CI and worst
    conversations; returns the GateResult when every check passed."""
    from .gate.message import failure_message

    target = result.run_dir if isinstance(result, RunResult) else result
    spec = {m: f">= {r}" if isinstance(r, int | float) else r for m, r in rules.items()}
    verdict = gate(target, spec, baseline=baseline, max_drop=max_drop)
    if not verdict.passed:
        raise AssertionError(failure_message(verdict))
    return verdict
