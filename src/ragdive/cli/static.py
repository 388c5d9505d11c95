"""`ragdive static DATASET --target CONFIG`: ask a static Q&A set once per question, score the single-turn
metrics, write a run of kind "static" next to the dynamic ones."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from ..analysis import RunScores
from ..config import ExperimentConfig, load_config
from ..errors import ConfigError, RagdiveError
from ..evaluation import Evaluator
from ..evaluation.metrics import check_metric_names, configured_metrics
from ..evaluation.static import StaticItem, ask_dataset, load_static_dataset
from ..models import ModelContext, apply_model_overrides, models_for_roles
from ..models.selfcheck import check_local_models
from ..pipeline import build_judge, evaluate_store, parse_metrics
from ..records import Conversation
from ..store import RunRecorder, RunStore
from ..targets import Target, build_experiment_target
from ._judging import console, print_summary
from ._progress import AskingProgress, ScoringProgress, progress_display


def static_cmd(
    dataset: Path = typer.Argument(..., help="CSV or JSONL with question and answer columns."),
    target: Path = typer.Option(..., "--target", help="Experiment YAML whose `target` section is the system."),
    model: list[str] = typer.Option([], "--model", help="Bind a role: judge=provider/model (repeatable)."),
    metrics: str | None = typer.Option(None, "--metrics", help="Comma-separated single-turn metrics."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Ask only the first N questions."),
    output: Path | None = typer.Option(None, "--output", help="Runs folder (default: the config's output_dir)."),
    evaluate: bool = typer.Option(True, "--evaluate/--no-evaluate", help="Score after asking."),
) -> None:
    """Ask every question once (a one-turn conversation), then score faithfulness, context precision, context
    recall and correctness against the dataset's answers."""
    cfg: ExperimentConfig = load_config(target)
    if cfg.target is None:
        raise ConfigError(f"{target}: no `target` section: static mode needs the system under test")
    items = load_static_dataset(dataset, limit=limit)
    single_turn = configured_metrics(None, kind="turn")
    default = [m for m in configured_metrics(cfg.evaluation.metrics) if m in single_turn] or single_turn
    names = check_metric_names(
        parse_metrics(metrics, default),
        kind="turn",
        why="static runs have one turn per question; these need conversations",
    )
    context = ModelContext.from_config(cfg)  # one cache and budget for the target's generator and the judge
    judge = build_judge(cfg, model, cfg.evaluation.concurrency, context=context) if evaluate else None
    target_model = _target_model(cfg, model, context)
    system = build_experiment_target(cfg, model=target_model)
    local = [m for m in (target_model, judge.model if judge else None) if m is not None]
    store = RunStore.create(
        output or Path(cfg.output_dir),
        config={**cfg.model_dump(mode="json"), "dataset": str(dataset)},
        kind="static",
        name=cfg.name,
        target=system.describe(),
        seed=cfg.seed,
        models={"judge": judge.name} if judge else {},
    )
    RunRecorder(store).start()
    console.print(f"run {store.path}: asking {len(items)} questions", markup=False)
    status, error = "failed", None
    progress = progress_display()
    try:
        with progress:
            asking = AskingProgress(progress, len(items))
            asked, errors = asyncio.run(
                _ask(system, items, store, cfg.seed, cfg.simulation.concurrency, asking.conversation, local)
            )
            if judge is not None:
                scoring = ScoringProgress(progress)
                evaluator = Evaluator(judge, names)
                result = asyncio.run(evaluate_store(evaluator, store, on_start=scoring.start, on_score=scoring.score))
        console.print(f"{asked} questions asked, {errors} target errors", markup=False)
        if judge is not None:
            console.print(f"{result.written} scores ({result.unscored} unscored), {result.judge_calls} judge calls")
        status = "finished"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    except RagdiveError as exc:
        error = str(exc)
        raise
    except Exception as exc:  # a bug: still say in the manifest why the run stopped
        error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        RunRecorder(store).finish(status, error)
        context.close()
    if judge is not None:
        print_summary(RunScores.from_store(store), names)


def _target_model(cfg: ExperimentConfig, overrides: list[str], context: ModelContext):  # type: ignore[no-untyped-def]
    """The `target` role's model, for the built-in reference RAG; None when the config binds none."""
    models = apply_model_overrides(cfg.models, overrides)
    if models.for_role("target") is None:
        return None
    return models_for_roles(models, ["target"], context=context)["target"]


async def _ask(
    system: Target,
    items: list[StaticItem],
    store: RunStore,
    seed: int,
    concurrency: int,
    on_conversation: Callable[[Conversation], None],
    local: list[Any],
) -> tuple[int, int]:
    try:
        await check_local_models(local)  # a broken embedded model fails here, before any question is asked
        return await ask_dataset(
            system, items, store, seed=seed, concurrency=concurrency, on_conversation=on_conversation
        )
    finally:
        await system.aclose()
