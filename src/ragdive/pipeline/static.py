"""Static mode (`ragdive static`, `ragdive.run_static`): ask every question of a Q&A dataset once against the
system under test, then score the single-turn metrics, into a run of kind "static" next to the dynamic ones.

The target's generator and the judge share one ModelContext (one cache and budget); every part is closed with
the caller's AsyncExitStack. The target-failure rule is the simulation's (`ragdive.targets.watch`)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ExperimentConfig
from ..errors import ConfigError
from ..evaluation import EvaluationResult, Evaluator, Judge
from ..evaluation.metrics import check_metric_names, configured_metrics
from ..evaluation.static import (
    StaticItem,
    ask_dataset,
    load_static_dataset,
    sample_per_document,
    static_conversation_id,
)
from ..models import Model, ModelContext, models_for_roles
from ..models.selfcheck import check_local_models
from ..records import ModelSpend
from ..simulation import seed_documents
from ..store import RunRecorder, RunStore, writer_lock
from ..store.session import RunSession
from ..targets import Target, build_experiment_target
from .building import build_judge, hold_context, parse_metrics
from .overlap import AskingHooks, ask_while_scoring


@dataclass
class StaticOutcome:
    store: RunStore
    asked: int
    errors: int
    metrics: list[str] = field(default_factory=list)
    evaluation: EvaluationResult | None = None


def static_metrics(config: ExperimentConfig, option: str | None) -> list[str]:
    """The single-turn metrics to score: ``--metrics``, else the config's single-turn ones, else all of them."""
    single_turn = configured_metrics(None, kind="turn")
    default = [m for m in configured_metrics(config.evaluation) if m in single_turn] or single_turn
    return check_metric_names(
        parse_metrics(option, default),
        kind="turn",
        why="static runs have one turn per question; these need conversations",
    )


def target_model(config: ExperimentConfig, context: ModelContext) -> Model | None:
    """The `target` role's model, for the built-in reference RAG; None when the config binds none."""
    if config.models.for_role("target") is None:
        return None
    return models_for_roles(config.models, ["target"], context=context)["target"]


async def run_static(
    config: ExperimentConfig,
    dataset: Path,
    resources: AsyncExitStack,
    *,
    metrics: str | None = None,
    limit: int | None = None,
    per_document: int | None = None,
    output: Path | None = None,
    evaluate: bool = True,
    hooks: AskingHooks | None = None,
    context: ModelContext | None = None,
    run_id: str | None = None,
    resume: Path | None = None,
) -> StaticOutcome:
    """Ask, then (``evaluate``) score, in one run session: the run ends ``finished``, ``budget_exceeded``,
    ``interrupted`` (cancelled) or ``failed`` with the error (all but the first raised again); what was asked
    and scored before stays on disk. ``resume`` continues that static run (questions answered and items scored
    are skipped); a sweep passes its shared ``context`` and the ``run_id`` it planned."""
    hooks = hooks or AskingHooks()
    if config.target is None:
        raise ConfigError("no `target` section: static mode needs the system under test")
    items = load_static_dataset(dataset, limit=limit)
    if per_document is not None:  # the paper's Table 5 setup: questions about the dynamic runs' seed documents
        seeds = [(d.id, d.title) for d in seed_documents(config)]
        items = sample_per_document(items, seeds, per_document, seed=config.seed)
    names = static_metrics(config, metrics)
    if context is None:  # the target's generator and the judge
        context = hold_context(resources, ModelContext.from_config(config))
    judge = build_judge(config, config.evaluation.concurrency, context=context) if evaluate else None
    if judge is not None:
        resources.push_async_callback(judge.aclose)
    generator = target_model(config, context)
    if generator is not None:
        resources.push_async_callback(generator.aclose)
    system = build_experiment_target(config, model=generator)
    resources.push_async_callback(system.aclose)
    store = _static_store(config, dataset, resume, output, run_id, system, judge)
    resources.enter_context(writer_lock(store.path))  # one writer per run, for the whole command
    recorder = RunRecorder(store)
    recorder.attach(context.ledger)  # the target's requests journaled as they are counted (store.spend_journal)

    def target_spend() -> list[ModelSpend]:
        # the judge's spend is recorded by the evaluator as it scores; this recorder adds the target's generator
        return [line for line in context.ledger.spend() if line.role != "judge"]

    session = RunSession(store, recorder=recorder, spend=target_spend)
    session.start()
    if hooks.on_created:
        hooks.on_created(store, len(items))
    return await session.run(lambda: _ask_and_score(config, items, store, system, judge, names, generator, hooks))


def _static_store(
    config: ExperimentConfig,
    dataset: Path,
    resume: Path | None,
    output: Path | None,
    run_id: str | None,
    system: Target,
    judge: Judge | None,
) -> RunStore:
    if resume is not None:
        store = RunStore.open(resume)
        if store.read_manifest().kind != "static":
            raise ConfigError(f"{resume} is not a static run; it cannot be resumed as one")
        return store
    return RunStore.create(
        output or Path(config.output_dir),
        run_id=run_id,
        config={**config.model_dump(mode="json"), "dataset": str(dataset)},
        kind="static",
        name=config.name,
        target=system.describe(),
        seed=config.seed,
        models={"judge": judge.name} if judge else {},
    )


async def _ask_and_score(
    config: ExperimentConfig,
    items: list[StaticItem],
    store: RunStore,
    system: Target,
    judge: Judge | None,
    names: list[str],
    target_model: Model | None,
    hooks: AskingHooks,
) -> StaticOutcome:
    local = [m for m in (target_model, judge.model if judge else None) if m is not None]
    await check_local_models(local)  # a broken embedded model fails here, before any question is asked

    # each answer is scored as soon as it is on disk, while later questions are still being asked
    (asked, errors), evaluation = await ask_while_scoring(
        Evaluator(judge, names) if judge is not None else None,
        store,
        lambda saved: ask_dataset(
            system, items, store, seed=config.seed, concurrency=config.simulation.concurrency, on_conversation=saved
        ),
        turns={static_conversation_id(i): 1 for i in range(len(items))},
        on_conversation=hooks.on_answer,
        on_start=hooks.on_scoring,
        on_score=hooks.on_score,
    )
    outcome = StaticOutcome(store, asked, errors, names)
    outcome.evaluation = evaluation
    return outcome
