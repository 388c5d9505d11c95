"""Frozen-user replay (`ragdive replay`, `ragdive.replay`): the recorded user messages of a run sent to another
target, into a new run of kind "replay", then scored. Its conversations keep the source's ids and turn indices, so
`ragdive compare SOURCE REPLAY` pairs them turn by turn (see analysis.compare).

Everything but the target comes from the source run's manifest: the corpus (the reference RAG indexes it), the
models (the reference RAG's generator, the judge), the metrics, cache, budget, seed and repeat
(`replay_settings`); the API applies ``--model`` to that config before `run_replay` builds anything. The target's
generator and the judge share one ModelContext; every part is closed with the caller's AsyncExitStack."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import ExperimentConfig, load_yaml, validate_config
from ..errors import BudgetExceeded, ConfigError
from ..evaluation import EvaluationResult
from ..models import ModelContext
from ..models.selfcheck import check_local_models
from ..records import ModelSpend
from ..redaction import redact
from ..simulation.replay import REPLAY_NOTE, replay_conversations, replayable
from ..store import RunRecorder, RunStore, writer_lock
from ..store.session import RunSession
from ..targets import build_experiment_target
from .building import _strip_masked, build_evaluator, hold_context, parse_metrics
from .overlap import AskingHooks, ask_while_scoring
from .static import static_metrics, target_model

# the source config's sections a replay keeps (the rest, the simulation's, did its work already)
KEPT = ("name", "seed", "repeat", "output_dir", "models", "corpus", "evaluation", "budget", "cache")


@dataclass
class ReplayOutcome:
    store: RunStore
    source: RunStore
    status: str
    replayed: int = 0
    errors: int = 0
    metrics: list[str] = field(default_factory=list)
    evaluation: EvaluationResult | None = None
    error: str | None = None


def load_target_file(path: Path) -> dict[str, Any]:
    """A target section from YAML: a file holding the section itself (``type: reference``...), or an experiment
    config whose ``target:`` is used (its other sections are not: they come from the source run)."""
    data = load_yaml(path)
    if isinstance(data, dict) and "target" in data and "type" not in data:
        data = data["target"]
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a target section (a mapping with `type:`)")
    config = validate_config({"target": data}, ExperimentConfig, source=str(path))
    assert config.target is not None
    return dict(config.target.model_dump(mode="json"))


def replay_config(source_config: dict[str, Any], target: dict[str, Any]) -> ExperimentConfig:
    """The source's settings with ``target`` in place of its own. A masked secret is left out (the provider reads
    its key from the environment again); a section an older ragdive wrote that no longer validates is a
    ConfigError naming it, not a silent default."""
    data = {k: v for k, v in _strip_masked(source_config).items() if k in KEPT}
    # the simulation's settings did their work; only its pace applies to sending the recorded turns
    concurrency = (source_config.get("simulation") or {}).get("concurrency")
    if concurrency is not None:
        data["simulation"] = {"concurrency": concurrency}
    return validate_config({**data, "target": target}, ExperimentConfig, source="the source run's config")


def _check_resumable(store: RunStore, source_id: str, target: dict[str, Any]) -> None:
    """A replay resumes only with its own source and target: anything else would mix two replays in one run."""
    manifest = store.read_manifest()
    if manifest.kind != "replay":
        raise ConfigError(f"--resume {store.path}: a run of kind {manifest.kind}, not a replay")
    problems = []
    if manifest.source_run != source_id:
        problems.append(f"source run (run: {manifest.source_run}, now: {source_id})")
    before, now = manifest.config.get("target"), redact(target)
    if before != now:
        changed = sorted(k for k in {*(before or {}), *now} if (before or {}).get(k) != now.get(k))
        problems.append(f"target ({', '.join(f'target.{k}' for k in changed)} differ)")
    if problems:
        raise ConfigError(f"--resume {store.path}: this replay was made with another " + "; ".join(problems))


def replay_settings(source: Path, target_file: Path) -> ExperimentConfig:
    """The replay's config: the source run's settings with the target section of ``target_file``."""
    return replay_config(RunStore.open(source).read_manifest().config, load_target_file(target_file))


async def run_replay(
    source: Path,
    config: ExperimentConfig,
    resources: AsyncExitStack,
    *,
    metrics: str | None = None,
    output: Path | None = None,
    resume: Path | None = None,
    evaluate: bool = True,
    hooks: AskingHooks | None = None,
) -> ReplayOutcome:
    """Replay, then (``evaluate``) score. The run ends ``finished``, ``budget_exceeded``, ``interrupted``
    (cancelled, re-raised) or ``failed`` with the error (re-raised); what was replayed and scored stays on disk."""
    hooks = hooks or AskingHooks()
    source_store = RunStore.open(source)
    source_manifest = source_store.read_manifest()
    assert config.target is not None  # replay_settings always sets it
    target = dict(config.target.model_dump(mode="json"))
    conversations = replayable(source_store.current_conversations())
    if not conversations:
        raise ConfigError(f"{source} has no conversation with a turn to replay")
    if source_manifest.kind == "static":
        names = static_metrics(config, metrics)
    else:
        names = parse_metrics(metrics, config.evaluation)
    if resume is not None:
        _check_resumable(RunStore.open(resume), source_manifest.run_id, target)
    context = hold_context(resources, ModelContext.from_config(config))  # the target's generator and the judge
    evaluator = None
    if evaluate:  # built first: a missing judge is found before anything is sent (closed with ``resources``)
        evaluator = build_evaluator(config, names, config.evaluation.concurrency, resources=resources, context=context)
    generator = target_model(config, context)
    if generator is not None:
        resources.push_async_callback(generator.aclose)
    system = build_experiment_target(config, model=generator)
    resources.push_async_callback(system.aclose)
    if resume is not None:
        store = RunStore.open(resume)
    else:
        store = RunStore.create(
            output or Path(config.output_dir),
            config={**config.model_dump(mode="json"), "replay": {"source": str(source)}},
            kind="replay",
            source_run=source_manifest.run_id,
            note=REPLAY_NOTE,
            name=f"{source_manifest.name or source_manifest.run_id} replay",
            target=system.describe(),
            seed=config.seed,
            models={"target": generator.name} if generator is not None else {},
        )
    resources.enter_context(writer_lock(store.path))  # one writer per run, for the whole command
    recorder = RunRecorder(store)
    recorder.attach(context.ledger)  # the target's requests journaled as they are counted (store.spend_journal)

    def target_spend() -> list[ModelSpend]:
        # the judge's spend is recorded by the evaluator as it scores; this recorder adds the rest
        return [line for line in context.ledger.spend() if line.role != "judge"]

    session = RunSession(store, recorder=recorder, spend=target_spend)
    session.start()
    if hooks.on_created:  # how many this session sends: a resumed replay skips the finished ones
        done = store.finished_conversation_ids()
        hooks.on_created(store, sum(c.id not in done for c in conversations))
    outcome = ReplayOutcome(store, source_store, "finished", metrics=names)

    async def replay_and_score() -> ReplayOutcome:
        await check_local_models([generator] if generator is not None else [])  # the judge's: when scoring

        if evaluator is not None:
            outcome.metrics = evaluator.score_names
        # each replayed conversation is scored as soon as it is on disk, while later ones are still being sent
        (outcome.replayed, outcome.errors), outcome.evaluation = await ask_while_scoring(
            evaluator,
            store,
            lambda saved: replay_conversations(
                system, conversations, store, concurrency=config.simulation.concurrency, on_conversation=saved
            ),
            turns={c.id: len(c.turns) for c in conversations},
            on_conversation=hooks.on_answer,
            on_start=hooks.on_scoring,
            on_score=hooks.on_score,
        )
        return outcome

    try:
        await session.run(replay_and_score)
    except BudgetExceeded:  # the session wrote budget_exceeded: a spent budget is an outcome, not an error
        pass
    assert session.ending is not None
    outcome.status, outcome.error = session.ending.status, session.ending.error
    return outcome
