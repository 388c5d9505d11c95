"""From an experiment config to a simulation ready to run: corpus, personas, models, target, run store. The
pipeline is the composition root: what a run is made of is built here, from a resolved config (role overrides were
applied once, at the API's edge).

Relative paths in the config (corpus, persona files) are read relative to the current directory. The models and
the target are registered on the caller's AsyncExitStack as they are built, so whoever opened it (the Python API,
a sweep, a Ray worker) closes them once, however the run ends.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ExperimentConfig
from ..corpus import CorpusSummary
from ..errors import ConfigError
from ..models import Model, ModelContext, models_for_roles
from ..models.selfcheck import check_local_models
from ..simulation.dialogue import DialogueSettings
from ..simulation.fingerprints import prompt_fingerprint
from ..simulation.generator import Generator
from ..simulation.launch import seed_sampler
from ..simulation.personas import resolve_personas
from ..simulation.resume_check import check_resumable
from ..simulation.runner import RunObserver, Shard, SimulationRunner, plan_conversations
from ..simulation.steering import load_plans
from ..simulation.validator import Validator
from ..store import RunStore, writer_lock
from ..targets import Target, build_experiment_target


@dataclass(frozen=True)
class RunOptions:
    """Where and how one run is made, beside its config: the one record the API, a sweep and a Ray worker hand to
    the pipeline (instead of the same nine keywords passed down three layers)."""

    output: Path | None = None
    """Folder that receives a new run directory (default: the config's output_dir)."""
    resume: Path | None = None
    """Continue this run directory instead of making one."""
    no_cache: bool = False
    cache_dir: str | Path | None = None
    observer: RunObserver | None = None
    """Told of the simulation's progress (turns, rejections, conversations)."""
    context: ModelContext | None = None
    """A model context shared with other runs (a sweep's: one cache, one limiter per endpoint); closed by its owner."""
    run_id: str | None = None
    """The id a sweep planned for a new run."""
    shard: Shard | None = None
    """Only this part of the conversations (a worker of a run split among workers)."""


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


async def prepare_run(
    config: ExperimentConfig,
    resources: AsyncExitStack,
    options: RunOptions = RunOptions(),
) -> PreparedRun:
    """Check everything that can be checked before any model is called, then create (or reopen) the run.

    ``context`` shares the cache, usage ledger and budget with models built elsewhere (the pipeline's judge);
    without one the run builds its own from the config. Models, target and a context built here are closed with
    ``resources``. ``shard``: only that part of the conversations (a worker of a distributed run)."""
    resume, output, context, shard = options.resume, options.output, options.context, options.shard
    if config.corpus is None:
        raise ConfigError("simulate needs a corpus: set corpus.path in the config")
    if config.target is None:
        raise ConfigError("simulate needs a target: set the target section in the config")
    sim = config.simulation
    personas = resolve_personas(sim.personas, sim.persona_files)
    loaded, sampler = seed_sampler(config)
    plans = plan_conversations(
        sim.conversations, run_seed=config.seed, personas=personas, sampler=sampler, repeat=config.repeat
    )
    if sim.plans is not None:  # steered conversations: each plan's fixed turns, per seed documents or for all
        steering = load_plans(sim.plans)
        if steering.longest > sim.max_turns:
            raise ConfigError(
                f"simulation.plans: a plan in {sim.plans} has {steering.longest} turns, more than max_turns "
                f"({sim.max_turns})"
            )
        for plan in plans:
            plan.steps = steering.for_documents([d.id for d in plan.documents])
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
        context = ModelContext.from_config(config, no_cache=options.no_cache, cache_dir=options.cache_dir)
        resources.callback(context.close)  # registered first: closed after the models that use it
    roles = ["user", "validator"] + (["target"] if config.models.for_role("target") is not None else [])
    models = models_for_roles(config.models, roles, context=context)
    for model in models.values():
        resources.push_async_callback(model.aclose)
    if sim.stop == "satisfied" and models["user"].prompt_profile == "base":
        raise ConfigError(
            f"simulation.stop: satisfied needs a user model that follows instructions; {models['user'].name} has the "
            "base prompt profile (set models.user.prompt_profile: chat, or use stop: fixed)"
        )
    target = build_experiment_target(config, model=models.get("target"))
    resources.push_async_callback(target.aclose)
    await target.check_reachable()  # a target that is down fails now, not after the first drafts

    if store is None:  # created only now, so a config mistake leaves no empty run behind
        store = RunStore.create(
            Path(output or config.output_dir),
            run_id=options.run_id,
            config=config.model_dump(mode="json"),
            name=config.name,
            kind="dynamic",
            seed=config.seed,
            models={role: model.name for role, model in models.items()},
            roles={role: model.setup(_prompts_of(role, model, sim.stop)) for role, model in models.items()},
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
            stop=sim.stop,
            min_turns=sim.min_turns,
        ),
        concurrency=sim.concurrency,
        observer=options.observer,
    )
    return PreparedRun(store=store, runner=runner, models=models, target=target, corpus=loaded.summary)


def _prompts_of(role: str, model: Model, stop: str) -> str | None:
    """The fingerprint of what the simulation sends ``role`` (the target's prompts are the target's own)."""
    return prompt_fingerprint(role, model.prompt_profile, stop) if role in ("user", "validator") else None
