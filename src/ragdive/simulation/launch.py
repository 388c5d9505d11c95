"""From an experiment config to a running simulation: corpus, personas, models, target, run store.

Relative paths in the config (corpus, persona files) are read relative to the current directory. The models and
the target are registered on the caller's AsyncExitStack as they are built, so whoever opened it (a command, the
Python API, the pipeline) closes them once, however the run ends.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ExperimentConfig
from ..corpus import CorpusSummary, LoadedCorpus, SizeLimit, load_corpus
from ..corpus.sampling import SeedSampler
from ..errors import ConfigError
from ..models import Model, ModelContext, models_for_roles
from ..models.selfcheck import check_local_models
from ..records import Document
from ..store import RunStore, writer_lock
from ..targets import Target, build_experiment_target
from .dialogue import DialogueSettings
from .generator import Generator
from .personas import resolve_personas
from .resume_check import check_resumable
from .runner import RunObserver, Shard, SimulationRunner, plan_conversations
from .validator import Validator


@dataclass
class PreparedRun:
    store: RunStore
    runner: SimulationRunner
    models: dict[str, Model] = field(default_factory=dict)
    target: Target | None = None
    check_also: list[Model] = field(default_factory=list)
    """Models of later stages (the pipeline's judge) whose local self-check runs before simulating too."""
    corpus: CorpusSummary | None = None
    """What loading the corpus read, skipped and cut: commands print its one line."""

    def __post_init__(self) -> None:
        self.runner.preflight = lambda: check_local_models([*self.models.values(), *self.check_also])


def _seed_sampler(config: ExperimentConfig) -> tuple[LoadedCorpus, SeedSampler]:
    """The corpus as the simulation reads it, and the sampler that draws each conversation's seed documents."""
    corpus, sim = config.corpus, config.simulation
    assert corpus is not None
    size_limit = SizeLimit(corpus.max_document_tokens, corpus.on_oversize) if corpus.max_document_tokens else None
    loaded = load_corpus(
        corpus.path, format=corpus.format, limit=corpus.max_documents, encoding=corpus.encoding, size_limit=size_limit
    )
    documents = loaded.documents
    if sim.max_document_chars:
        documents = [d.model_copy(update={"text": d.text[: sim.max_document_chars]}) for d in documents]
    return loaded, SeedSampler(documents, seed=config.seed, mode=corpus.sampling, group_size=corpus.group_size)


def seed_documents(config: ExperimentConfig) -> list[Document]:
    """The seed documents the config's conversations are drawn from, each once, in the order conversations first
    use them. They do not depend on the repeat (repeats ask about the same documents, as the paper's Table 3
    needs), so a static arm can ask about exactly these."""
    if config.corpus is None:
        raise ConfigError("seed documents need a corpus: set corpus.path in the config")
    _, sampler = _seed_sampler(config)
    seen: dict[str, Document] = {}
    for index in range(config.simulation.conversations):
        for document in sampler.for_conversation(index):
            seen.setdefault(document.id, document)
    return list(seen.values())


async def prepare_run(
    config: ExperimentConfig,
    resources: AsyncExitStack,
    *,
    resume: Path | None = None,
    output: Path | None = None,
    observer: RunObserver | None = None,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    context: ModelContext | None = None,
    run_id: str | None = None,
    shard: Shard | None = None,
) -> PreparedRun:
    """Check everything that can be checked before any model is called, then create (or reopen) the run.

    ``context`` shares the cache, usage ledger and budget with models built elsewhere (the pipeline's judge);
    without one the run builds its own from the config. Models, target and a context built here are closed with
    ``resources``. ``shard``: only that part of the conversations (a worker of a distributed run)."""
    if config.corpus is None:
        raise ConfigError("simulate needs a corpus: set corpus.path in the config")
    if config.target is None:
        raise ConfigError("simulate needs a target: set the target section in the config")
    sim = config.simulation
    personas = resolve_personas(sim.personas, sim.persona_files)
    loaded, sampler = _seed_sampler(config)
    plans = plan_conversations(
        sim.conversations, run_seed=config.seed, personas=personas, sampler=sampler, repeat=config.repeat
    )
    if shard is not None:
        plans = [plan for plan in plans if shard.holds(plan.index)]

    store = RunStore.open(resume) if resume is not None else None
    if store is not None:
        resources.enter_context(writer_lock(store.path))  # one writer per run, for the whole command
        manifest = store.read_manifest()
        if manifest.kind != "dynamic":
            raise ConfigError(f"{resume} is a {manifest.kind} run; only simulated runs can be resumed by simulate")
        if manifest.seed is not None and manifest.seed != config.seed:
            raise ConfigError(
                f"{resume} was run with seed {manifest.seed} but the config has seed {config.seed}: "
                "conversation ids would not match; use the run's seed to resume it"
            )
        check_resumable(manifest.config, config, resume)
        if manifest.config.get("simulation", {}).get("conversations") != sim.conversations:
            simulation = {**manifest.config.get("simulation", {}), "conversations": sim.conversations}
            store.update_manifest(config={**manifest.config, "simulation": simulation})  # the run now has more

    # models and target last among the checks: an embedded model is expensive to load for nothing
    # one context for every role: a shared cache, usage ledger and budget
    if context is None:
        context = ModelContext.from_config(config, no_cache=no_cache, cache_dir=cache_dir)
        resources.callback(context.close)  # registered first: closed after the models that use it
    roles = ["user", "validator"] + (["target"] if config.models.for_role("target") is not None else [])
    models = models_for_roles(config.models, roles, context=context)
    for model in models.values():
        resources.push_async_callback(model.aclose)
    target = build_experiment_target(config, model=models.get("target"))
    resources.push_async_callback(target.aclose)
    await target.check_reachable()  # a target that is down fails now, not after the first drafts

    if store is None:  # created only now, so a config mistake leaves no empty run behind
        store = RunStore.create(
            Path(output or config.output_dir),
            run_id=run_id,
            config=config.model_dump(mode="json"),
            name=config.name,
            kind="dynamic",
            seed=config.seed,
            models={role: model.name for role, model in models.items()},
            target=target.describe(),
        )
        resources.enter_context(writer_lock(store.path))
    runner = SimulationRunner(
        store=store,
        plans=plans,
        generator=Generator(models["user"], history_window=sim.history_window),
        validator=Validator(
            models["validator"], history_window=sim.history_window, evidence_threshold=sim.evidence_threshold
        ),
        target=target,
        settings=DialogueSettings(
            max_turns=sim.max_turns,
            max_attempts=sim.max_attempts,
            on_exhausted=sim.on_exhausted,
            unanswerable_rate=sim.unanswerable_rate,
        ),
        concurrency=sim.concurrency,
        observer=observer,
    )
    return PreparedRun(store=store, runner=runner, models=models, target=target, corpus=loaded.summary)
