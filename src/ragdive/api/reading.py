"""The use cases that read runs: `compare`, `load_run`, `list_runs`, `import_run`, and the CI gate (`gate`,
`assert_gate`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..store import RunStore
from ..sync_edge import run_sync
from .configs import ConfigLike, load_experiment
from .results import Comparison, RunResult, run_result


def load_run(run_dir: str | Path) -> RunResult:
    """A run directory as a RunResult, summarised over the metrics it was scored with (`ragdive runs show`)."""
    store = RunStore.open(Path(run_dir))
    names = list(dict.fromkeys(s.metric for s in store.current_scores()))
    return run_result(store, names or None)


def list_runs(root: str | Path) -> list[RunResult]:
    """The runs directly under ``root``, oldest first, each as `load_run` reads it (`ragdive runs list`)."""
    from ..store import list_runs as stores

    return [load_run(store.path) for store in stores(Path(root))]


def compare(*runs: str | Path | Sequence[str | Path], metrics: Sequence[str] | None = None) -> list[Comparison]:
    """Each argument is one run directory or a list of repeated runs of one configuration; the first is the
    baseline. One Comparison per other configuration (`ragdive compare` prints the same numbers)."""
    from ..analysis import RunScores, compare_configurations
    from ..evaluation.metrics import LOWER_IS_BETTER  # the registry: which metrics improve downwards

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
    from ..interop.imports import ImportedRun
    from ..interop.imports import import_run as write_imported

    prepare = None
    if rewrite:
        settings = load_experiment(config if config is not None else {}, models=list(models))

        def prepare(run: ImportedRun) -> None:
            from ..pipeline.rewrite import rewrite_conversations

            outcome, model = run_sync(lambda: rewrite_conversations(run.conversations, settings))
            run.invented = [i for i in run.invented if not i.startswith("stand-alone questions")]
            run.invented.append(
                f"stand-alone questions after the first turn: rewritten by the user model {model} "
                f"({outcome.rewritten} rewritten, {outcome.unchanged} already stood alone)"
            )
            if outcome.failed:
                shown = "; ".join((outcome.failures or [])[:3])
                run.notes.append(f"{outcome.failed} rewrite(s) failed, kept as sent: {shown}")

    store = write_imported(source_format, [Path(f) for f in files], Path(output), name=name, prepare=prepare)
    return run_result(store, None)


def _name(runs: list[Any]) -> str:
    return str(runs[0].name) + (f" (+{len(runs) - 1} repeats)" if len(runs) > 1 else "")


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
    from ..config.gate import parse_gate
    from ..evaluation.metrics import LOWER_IS_BETTER
    from ..gate.use_case import gate_runs

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
    from ..gate.message import failure_message

    target = result.run_dir if isinstance(result, RunResult) else result
    spec = {m: f">= {r}" if isinstance(r, int | float) else r for m, r in rules.items()}
    verdict = gate(target, spec, baseline=baseline, max_drop=max_drop)
    if not verdict.passed:
        raise AssertionError(failure_message(verdict))
    return verdict
