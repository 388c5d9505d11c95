"""What `config check` can tell before a run: first without calling anything (paths exist, every role a command
needs is bound, keys are in the environment), then, with --probe, one call to each model and one to the target.

Found as a new user before this existed: `config check` said "valid" for a corpus path that did not exist and for
a config with no judge, and an unreachable target was found only after 47 s of drafting.
"""

from __future__ import annotations

import importlib.util
import os
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ExperimentConfig, ModelSpec, PythonTargetConfig, ReferenceTargetConfig
from ..errors import ModelStopped, RagdiveError
from ..models import GenerateParams, Message, ModelContext, models_for_roles
from ..models.health import credential_source
from ..models.usage import unpriced_under_budget
from ..targets import build_experiment_target
from ..targets.base import DialogueState

COMMANDS = ("run", "simulate", "static", "evaluate")
# what each part of a config is for: a part left out makes the config incomplete for these commands only, so a
# judge-only config for `evaluate` is fine and says so, and a config meant for `run` without a judge is not "valid"
NEEDED_BY = {
    "corpus": ("run", "simulate"),
    "target": ("run", "simulate", "static"),
    "models.user": ("run", "simulate"),
    "models.validator": ("run", "simulate"),
    "models.judge": ("run", "static", "evaluate"),
    "models.target": ("run", "simulate", "static"),  # only with the reference target
}
PROBE_MESSAGE = "This is a connectivity check from ragdive. Reply with the single word OK."
DEFAULT_KEY_ENV = "OPENAI_API_KEY"  # the openai backend's default (models/backends/openai_compat.py)


@dataclass
class Preflight:
    problems: list[str] = field(default_factory=list)
    """Wrong whatever the command: a path that does not exist, a key not in the environment..."""
    missing: list[str] = field(default_factory=list)
    """Parts left out (corpus, target, models.<role>), each keeping the config from some commands."""

    @property
    def complete_for(self) -> list[str]:
        blocked = {command for part in self.missing for command in NEEDED_BY[part]}
        return [c for c in COMMANDS if c not in blocked]

    def missing_lines(self) -> list[str]:
        return [f"{part}: not set ({', '.join(NEEDED_BY[part])} need it)" for part in self.missing]


def offline_check(config: ExperimentConfig) -> Preflight:
    """Everything that can be seen without calling a model or the target."""
    found = Preflight()
    if config.corpus is None:
        found.missing.append("corpus")
    elif not Path(config.corpus.path).exists():
        found.problems.append(f"corpus.path: {config.corpus.path} does not exist")
    for file in config.simulation.persona_files:
        if not Path(file).is_file():
            found.problems.append(f"simulation.persona_files: {file} does not exist")
    if all(Path(f).is_file() for f in config.simulation.persona_files):
        from ..simulation.personas import resolve_personas

        try:  # as `run` does: a misspelled field in a persona file or an unknown persona name is found here
            resolve_personas(list(config.simulation.personas), list(config.simulation.persona_files))
        except RagdiveError as exc:
            found.problems.append(f"simulation.personas: {exc}")
    if config.simulation.plans is not None:
        from ..simulation.steering import load_plans

        try:  # as `run` does: a plan that does not read is found here
            load_plans(config.simulation.plans)
        except RagdiveError as exc:
            found.problems.append(str(exc))
    if config.target is None:
        found.missing.append("target")
    found.problems += _target_problems(config)
    for role in needed_roles(config):
        spec = config.models.for_role(role)
        if spec is None:
            found.missing.append(f"models.{role}")
        else:
            found.problems += _key_problems(role, spec)
    bound = {r: s for r in needed_roles(config) if (s := config.models.for_role(r)) is not None}
    if refused := unpriced_under_budget(config.budget, bound):
        found.problems.append(refused)
    return found


def needed_roles(config: ExperimentConfig) -> list[str]:
    roles = ["user", "validator", "judge"]
    if isinstance(config.target, ReferenceTargetConfig):
        roles.append("target")
    return roles


def _target_problems(config: ExperimentConfig) -> list[str]:
    target = config.target
    if isinstance(target, PythonTargetConfig):
        module = target.callable.partition(":")[0]
        try:
            found = importlib.util.find_spec(module)  # finds the module without running it
        except (ImportError, ValueError):
            found = None
        if found is None:
            return [f"target.callable: module {module!r} is not importable from here"]
    if isinstance(target, ReferenceTargetConfig) and target.corpus and not Path(target.corpus).exists():
        return [f"target.corpus: {target.corpus} does not exist"]
    return []


def _key_problems(role: str, spec: ModelSpec) -> list[str]:
    """An OpenAI-style model without a base_url needs a key; a local server (base_url set) usually does not."""
    if spec.provider != "openai" or spec.api_key or spec.base_url:
        return []
    env = spec.api_key_env or DEFAULT_KEY_ENV
    if os.environ.get(env):
        return []
    return [f"models.{role}: {spec.model} needs an API key: the environment variable {env} is not set"]


@dataclass
class ProbeResult:
    what: str
    """models.<role> (provider/model) or target (its description)."""
    error: str | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.error is None

    def line(self) -> str:
        status = "ok" if self.ok else f"FAILED: {self.error}"
        return f"{self.what}: {status} ({self.seconds:.1f} s)"


async def probe(config: ExperimentConfig, resources: AsyncExitStack) -> list[ProbeResult]:
    """One real call to each bound model (no cache) and to the target: answers whether each can be reached and
    accepts the request, not whether it is any good."""
    results: list[ProbeResult] = []
    context = ModelContext()  # no cache: a probe must reach the model
    roles = [r for r in needed_roles(config) if config.models.for_role(r) is not None]
    models = {}
    for role in roles:
        began = time.perf_counter()
        try:
            (model,) = models_for_roles(config.models, [role], context=context).values()
        except RagdiveError as exc:
            results.append(ProbeResult(f"models.{role}", str(exc), time.perf_counter() - began))
            continue
        resources.push_async_callback(model.aclose)
        models[role] = model
        try:
            await model.generate([Message(role="user", content=PROBE_MESSAGE)], params=GenerateParams(max_tokens=8))
            error = None
        except ModelStopped as exc:  # a probe stops no run: the model's own error, and where its key came from
            cause = exc.__cause__ if isinstance(exc.__cause__, RagdiveError) else exc
            error = (
                f"{str(cause).splitlines()[0]} (credential: {credential_source(model.spec, model.health.backend_env)})"
            )
        except RagdiveError as exc:
            error = str(exc).splitlines()[0]
        results.append(ProbeResult(f"models.{role} ({model.name})", error, time.perf_counter() - began))
    if config.target is not None:
        began = time.perf_counter()
        what = f"target ({config.target.type})"
        try:
            target = build_experiment_target(config, model=models.get("target"))
            resources.push_async_callback(target.aclose)
            what = f"target ({target.describe()})"
            await target.check_reachable()
            await target.respond(DialogueState(id="ragdive-probe"), PROBE_MESSAGE)
            error = None
        except RagdiveError as exc:
            error = str(exc).splitlines()[0]
        results.append(ProbeResult(what, error, time.perf_counter() - began))
    return results
