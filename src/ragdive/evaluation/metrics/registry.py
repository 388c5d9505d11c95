"""The one registry of metrics: each metric class declares its identity with ``@metric(...)`` in its own file, and
config checks, the evaluator, the Ragas engine, static mode and comparisons all read it from here.

Adding a metric is one module in single_turn/ or multi_turn/ (found by ``discover()``, no list to edit) plus its
prompt file. ``version`` is bumped by hand when the scoring rule changes; the prompt fingerprint follows the prompt
files by itself. Both go on every Score, so a resumed run can tell verdicts of an edited metric from old ones.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ...errors import ConfigError

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
Kind = Literal["turn", "conversation"]
Direction = Literal["higher", "lower"]
INPUTS = frozenset({"question", "ground_truth", "answer", "contexts", "conversation"})


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
    """The judge prompt's file stem under evaluation/prompts (every profile's variant counts in the fingerprint)."""
    cls: type
    default: bool = True
    """Scored when a config names no metrics. The paper's six are; metrics that cost a judge call per turn beyond
    the paper's (refusals, faithfulness in conversation, citations) are scored when named."""

    @property
    def lower_is_better(self) -> bool:
        return self.direction == "lower"

    def fingerprint(self) -> str:
        """Twelve hex digits of the metric's version and its prompt files' text (all variants)."""
        digest = hashlib.sha256(f"{self.name}:{self.version}".encode())
        if self.prompt is not None:
            for path in sorted(PROMPTS.rglob(f"{self.prompt}.md")):
                digest.update(path.relative_to(PROMPTS).as_posix().encode())
                digest.update(path.read_bytes())
        return digest.hexdigest()[:12]


_REGISTRY: dict[str, MetricInfo] = {}


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
        if name in _REGISTRY and _REGISTRY[name].cls is not cls:
            raise ValueError(f"metric {name!r} is registered twice ({_REGISTRY[name].cls.__name__}, {cls.__name__})")
        cls.name = name  # type: ignore[attr-defined]
        _REGISTRY[name] = MetricInfo(
            name, kind, direction, version, tuple(inputs), prompt or name, cls, default=default
        )
        return cls

    return register  # type: ignore[return-value]


def discover() -> dict[str, MetricInfo]:
    """The registry, with every built-in metric in it (a metric registered later, by importing its module, is in
    it too: registration is the decorator)."""
    _import_builtins()
    return _REGISTRY


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
    registry = discover()
    if name not in registry:
        raise ConfigError(f"unknown metric {name!r}; known: {', '.join(registry)}")
    return registry[name]


def check_metric_names(names: list[str], *, kind: Kind | None = None, why: str = "") -> list[str]:
    """``names`` de-duplicated, or one ConfigError naming every unknown (or wrong-kind) metric and the known ones."""
    registry = discover()
    allowed = [m.name for m in registry.values() if kind is None or m.kind == kind]
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise ConfigError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(registry)}")
    wrong = [n for n in names if n not in allowed]
    if wrong:
        raise ConfigError(f"{', '.join(wrong)}: {why or f'not a {kind} metric'}; allowed: {', '.join(allowed)}")
    if not names:
        raise ConfigError("name at least one metric")
    return list(dict.fromkeys(names))


def configured_metrics(names: list[str] | None, *, kind: Kind | None = None) -> list[str]:
    """The metric names a config asks for, checked; None (the config left them out): every default one."""
    if names is None:
        return [m.name for m in all_metrics(kind) if m.default]
    return check_metric_names(names, kind=kind)
