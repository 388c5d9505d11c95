"""The async stages wired together: an experiment (simulate, then score), scoring an existing run, static mode,
frozen-user replay. Every function takes the caller's AsyncExitStack and registers what it builds on it, so the
command (or the Python API) that opened the one event loop closes every model, target and cache once, however the
work ends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..importing import lazy_names
from .alarms import alarm_fields
from .building import (
    build_evaluator,
    build_judge,
    check_judge,
    hold_context,
    parse_metrics,
    settings_from_manifest,
)
from .experiment import (
    PipelineOutcome,
    PreparedExperiment,
    evaluate_store,
    prepare_experiment,
    run_experiment,
    run_simulation,
)
from .launch import PreparedRun, RunOptions, prepare_run
from .overlap import AskingHooks
from .scoring import ScoringOutcome, score_run, scoring_settings

if TYPE_CHECKING:
    from .replay import ReplayOutcome, replay_settings, run_replay
    from .static import StaticOutcome, run_static, static_metrics

# `ragdive run` neither replays nor asks fixed questions (~5 ms of its start-up)
__getattr__ = lazy_names(
    __name__,
    {
        "replay": ("ReplayOutcome", "replay_settings", "run_replay"),
        "static": ("StaticOutcome", "run_static", "static_metrics"),
    },
)


__all__ = [
    "AskingHooks",
    "alarm_fields",
    "PipelineOutcome",
    "PreparedExperiment",
    "PreparedRun",
    "RunOptions",
    "ReplayOutcome",
    "ScoringOutcome",
    "StaticOutcome",
    "build_evaluator",
    "build_judge",
    "check_judge",
    "evaluate_store",
    "hold_context",
    "parse_metrics",
    "prepare_experiment",
    "prepare_run",
    "run_experiment",
    "replay_settings",
    "run_replay",
    "run_simulation",
    "run_static",
    "score_run",
    "scoring_settings",
    "settings_from_manifest",
    "static_metrics",
]
