"""The one registry of metrics: each metric class declares its identity with ``@metric(...)`` in its own file, and
config checks, the evaluator, the Ragas engine, static mode and comparisons all read it from here.

Adding a built-in metric is one module in single_turn/ or multi_turn/ (found by ``discover()``, no list to edit) plus
its prompt file. A metric from another package is the same decorated class, named by an entry point in the group
``ragdive.metrics`` (see ragdive/registry.py); it is loaded when a config names it. ``version`` is bumped by hand
when the scoring rule changes; the prompt fingerprint follows the prompt files by itself. Both go on every Score,
so a resumed run can tell verdicts of an edited metric from old ones.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ... import prompt_files
from ...config import EvaluationConfig
from ...errors import ConfigError
from ...registry import Registry, did_you_mean

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
Kind = Literal["turn", "conversation"]
Direction = Literal["higher", "lower"]
INPUTS = frozenset({"question", "standalone_question", "ground_truth", "answer", "contexts", "conversation"})


@dataclass(frozen=True)
class MetricInfo:
    name: str
    kind: Kind
    direction: Direction
    """Which way is better: forgetfulness is lower-is-better, every other built-in metric higher."""
    version: int
    inputs: tuple[str, ...]
    """What the metric reads from a turn or conversation: the Ragas engine and static mode check these."""
    prompt: str | None
    """The judge prompt's file stem under evaluation/prompts, or ``"package:stem"`` for a plug-in's own
    ``prompts/<stem>.md`` (every profile's variant counts in the fingerprint)."""
    cls: type
    default: bool = True
    """Scored when a config names no metrics. The paper's six are; metrics that cost a judge call per turn beyond
    the paper's (refusals, faithfulness in conversation, citations) are scored when named."""
    spec: str = ""
    """A custom (YAML rubric) metric's declaration as JSON: part of its fingerprint, so an edited criterion is told
    apart from the old one even at the same version."""

    @property
    def lower_is_better(self) -> bool:
        return self.direction == "lower"

    def fingerprint(self) -> str:
        """Twelve hex digits of the metric's version and its prompt files' text (all variants)."""
        digest = hashlib.sha256(f"{self.name}:{self.version}".encode())
        if self.spec:
            digest.update(self.spec.encode())
        if self.prompt is not None and ":" in self.prompt:  # a plug-in's prompt, in its own package
            package, _, stem = self.prompt.rpartition(":")
            for name in (stem, f"base/{stem}"):
                if prompt_files.has_prompt(package, name):
                    digest.update(name.encode())
                    digest.update(prompt_files.prompt_path(package, name).read_bytes())
        elif self.prompt is not None:
            for path in sorted(PROMPTS.rglob(f"{self.prompt}.md")):
                digest.update(path.relative_to(PROMPTS).as_posix().encode())
                digest.update(path.read_bytes())
        return digest.hexdigest()[:12]


def _info_of(obj: object) -> MetricInfo:
    """What a plug-in's entry point names: a class decorated with ``@metric`` (or its MetricInfo)."""
    info = obj if isinstance(obj, MetricInfo) else getattr(obj, "metric_info", None)
    if not isinstance(info, MetricInfo):
        raise ConfigError(f"{obj!r} is not a metric: decorate its class with @ragdive.evaluation.metrics.metric(...)")
    return info


METRICS: Registry[MetricInfo] = Registry("metrics", noun="metric", adapt=_info_of)
"""Every metric by name: the built-ins (registered by their decorator), then installed plug-ins' entry points."""


def metric(
    name: str,
    *,
    kind: Kind,
    inputs: tuple[str, ...],
    direction: Direction = "higher",
    version: int = 1,
    prompt: str | None = None,
    default: bool = True,
) -> type:
    """Class decorator registering a metric. A second metric with the same name is a bug, not an override."""
    unknown = set(inputs) - INPUTS
    if unknown:
        raise ValueError(f"metric {name}: unknown inputs {sorted(unknown)}; known: {sorted(INPUTS)}")

    def register(cls: type) -> type:
        current = METRICS.builtin_names()
        if name in current and METRICS.get(name).cls is not cls:
            raise ValueError(f"metric {name!r} is registered twice ({METRICS.get(name).cls.__name__}, {cls.__name__})")
        cls.name = name  # type: ignore[attr-defined]
        info = MetricInfo(name, kind, direction, version, tuple(inputs), prompt or name, cls, default=default)
        cls.metric_info = info  # type: ignore[attr-defined]
        METRICS.add(name, info, replace=True)
        return cls

    return register  # type: ignore[return-value]


def discover() -> dict[str, MetricInfo]:
    """Every metric registered in this process: the built-ins and any imported decorated class (registration is
    the decorator). Installed plug-ins' metrics are not loaded here: they run when a config names them."""
    _import_builtins()
    return {name: METRICS.get(name) for name in METRICS.builtin_names()}


@functools.cache
def _import_builtins() -> None:
    """Import every metric module of the built-in packages, once: every score asks for its metric's identity, and
    listing the packages' folders each time cost ~0.2 ms per score (issue 13's profile)."""
    for package in ("single_turn", "multi_turn"):
        module = importlib.import_module(f"{__package__}.{package}")
        for info in pkgutil.iter_modules(module.__path__):
            importlib.import_module(f"{module.__name__}.{info.name}")


def all_metrics(kind: Kind | None = None) -> list[MetricInfo]:
    return [m for m in discover().values() if kind is None or m.kind == kind]


def metric_info(name: str) -> MetricInfo:
    """The metric named ``name``: built in, registered in-process, or an installed plug-in's (loaded here)."""
    _import_builtins()
    return METRICS.get(name)


def check_metric_names(names: list[str], *, kind: Kind | None = None, why: str = "") -> list[str]:
    """``names`` de-duplicated, or one ConfigError naming every unknown (or wrong-kind) metric and the known ones."""
    _import_builtins()
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        known = METRICS.names()
        hint = did_you_mean(unknown[0], known) if len(unknown) == 1 else ""
        raise ConfigError(f"unknown metric(s) {', '.join(unknown)}{hint}; known: {', '.join(known)}")
    infos = {n: METRICS.get(n) for n in names}
    allowed = [m.name for m in discover().values() if kind is None or m.kind == kind]
    wrong = [n for n in names if kind is not None and infos[n].kind != kind]
    if wrong:
        raise ConfigError(f"{', '.join(wrong)}: {why or f'not a {kind} metric'}; allowed: {', '.join(allowed)}")
    if not names:
        raise ConfigError("name at least one metric")
    return list(dict.fromkeys(names))


def configured_metrics(names: list[str] | None | EvaluationConfig, *, kind: Kind | None = None) -> list[str]:
    """The metric names a config asks for, checked; None (the config left them out): every default built-in one
    (a plug-in's run when named)."""
    if isinstance(names, EvaluationConfig):  # a config's section: its custom metrics are registered and default
        from .rubric import register_custom_metrics

        custom = register_custom_metrics(names.custom_metrics)
        if names.metrics is None:
            return configured_metrics(None, kind=kind) + [m.name for m in custom if kind is None or m.kind == kind]
        names = names.metrics
    if names is None:
        return [m.name for m in all_metrics(kind) if m.default]
    return check_metric_names(names, kind=kind)
