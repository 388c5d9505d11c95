"""The Python API, the one way into the pipeline: the command line, notebooks and the pytest plugin all stand on it.

One typed function per use case, each as a coroutine (``a...``) and a sync form: `run`, `simulate`, `evaluate`,
`static`, `replay`, `sweep`, `analyze` and `report` (which may ask a judge); and `compare`, `load_run`, `list_runs`,
`import_run`, `export`, `annotate_export`, `annotate_import`, `annotate_summary`, `gate`, `assert_gate`, which read
runs or send them on. Every use case that works takes one ``observer`` (an `Observer`) for its progress; configs
take one override form, dotted config paths as a sweep's axes: ``run("exp.yaml", {"simulation.concurrency": 2})``.

The sync forms are this API's edge, as one ``asyncio.run`` per command is the command line's: outside an event
loop they run one; inside a running one (a Jupyter notebook) they run the coroutine in a fresh thread with its own
loop and wait for it, so they work there too, without nest_asyncio.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..sync_edge import sync_of

if TYPE_CHECKING:
    from .analyses import AnalysisResult, ReportResult, aanalyze, areport
    from .annotations import ImportedRatings, RatingSheets, annotate_export, annotate_import, annotate_summary
    from .configs import ConfigLike, Overrides, load_experiment
    from .exports import ExportResult, export
    from .observer import Observer
    from .reading import assert_gate, compare, gate, import_run, list_runs, load_run
    from .results import Comparison, MetricResult, RunResult, ScoringResult, SweepResult
    from .runs import aevaluate, areplay, arun, asimulate, astatic
    from .sweeps import PlannedSweep, asweep, plan_sweep

    run = sync_of(arun)
    simulate = sync_of(asimulate)
    evaluate = sync_of(aevaluate)
    static = sync_of(astatic)
    replay = sync_of(areplay)
    sweep = sync_of(asweep)
    analyze = sync_of(aanalyze)
    report = sync_of(areport)

# Each name is imported from its module on first use, so a command loads the modules it uses: `ragdive run`
# loaded every use case's (analyses, annotations, exports, sweeps and what they import) before its first request.
_HOMES = {
    "analyses": ("AnalysisResult", "ReportResult", "aanalyze", "areport"),
    "annotations": ("ImportedRatings", "RatingSheets", "annotate_export", "annotate_import", "annotate_summary"),
    "configs": ("ConfigLike", "Overrides", "load_experiment"),
    "exports": ("ExportResult", "export"),
    "observer": ("Observer",),
    "reading": ("assert_gate", "compare", "gate", "import_run", "list_runs", "load_run"),
    "results": ("Comparison", "MetricResult", "RunResult", "ScoringResult", "SweepResult"),
    "runs": ("aevaluate", "areplay", "arun", "asimulate", "astatic"),
    "sweeps": ("PlannedSweep", "asweep", "plan_sweep"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}
# Each sync form is its coroutine's signature and docstring, waited for at the sync edge (`sync_of`).
_SYNC = {
    "run": "arun",
    "simulate": "asimulate",
    "evaluate": "aevaluate",
    "static": "astatic",
    "replay": "areplay",
    "sweep": "asweep",
    "analyze": "aanalyze",
    "report": "areport",
}

__all__ = [
    "AnalysisResult",
    "Comparison",
    "ConfigLike",
    "ExportResult",
    "ImportedRatings",
    "MetricResult",
    "Observer",
    "Overrides",
    "PlannedSweep",
    "RatingSheets",
    "ReportResult",
    "RunResult",
    "ScoringResult",
    "SweepResult",
    "aanalyze",
    "aevaluate",
    "analyze",
    "annotate_export",
    "annotate_import",
    "annotate_summary",
    "areplay",
    "areport",
    "arun",
    "asimulate",
    "assert_gate",
    "astatic",
    "asweep",
    "compare",
    "evaluate",
    "export",
    "gate",
    "import_run",
    "list_runs",
    "load_experiment",
    "load_run",
    "plan_sweep",
    "replay",
    "report",
    "run",
    "simulate",
    "static",
    "sweep",
]


def __getattr__(name: str) -> Any:
    if name in _SYNC:
        value = sync_of(__getattr__(_SYNC[name]))  # belongs to this module (sync_of): pickles as ragdive.api.NAME
    elif name in _HOME:
        value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # once: every later use is the same object
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
