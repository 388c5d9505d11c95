"""Analyses of the simulated conversations themselves: question-type flow, uniqueness across repeats,
validator rejections, forgetfulness/retention lapses and per-turn metric curves.

Records in, numbers out: nothing here imports the model layer (an embedder for uniqueness is passed in as a
plain callable). Turns are numbered from 1 in every result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...importing import lazy_names
from .curves import CurvePoint, metric_curves
from .flow import TYPES, Flow, TypeShares, question_flow, type_shares
from .lapses import LAPSE_METRICS, LapseStats, lapse_stats
from .lengths import STOPS, Lengths, conversation_lengths, stop_of
from .overview import ALL, ConversationAnalysis, RunRecords, analyse, analyse_groups, flatten, to_data
from .rejections import Acceptance, RejectionCell, RejectionStats, acceptance, rejection_stats
from .uniqueness import (
    DEFAULT_METHOD,
    DEFAULT_THRESHOLD,
    OVERLAP_THRESHOLD,
    Embedder,
    PairJudge,
    TokenOverlap,
    TurnUniqueness,
    Uniqueness,
    content_words,
    default_threshold,
    normalise,
    pair_accuracy,
    pair_similarities,
    question_uniqueness,
    seed_key,
)

if TYPE_CHECKING:
    from .uniqueness_calibration import LabelledQuestion, UniquenessCalibration, calibrate, read_labels

# `analyze --calibrate-uniqueness` only: a run's report does not calibrate (~5 ms of a run)
__getattr__ = lazy_names(
    __name__, {"uniqueness_calibration": ("LabelledQuestion", "UniquenessCalibration", "calibrate", "read_labels")}
)


__all__ = [
    "ALL",
    "DEFAULT_METHOD",
    "DEFAULT_THRESHOLD",
    "OVERLAP_THRESHOLD",
    "LAPSE_METRICS",
    "TYPES",
    "Acceptance",
    "ConversationAnalysis",
    "CurvePoint",
    "Embedder",
    "Flow",
    "LabelledQuestion",
    "TokenOverlap",
    "UniquenessCalibration",
    "calibrate",
    "content_words",
    "content_words",
    "default_threshold",
    "read_labels",
    "LapseStats",
    "Lengths",
    "STOPS",
    "conversation_lengths",
    "stop_of",
    "PairJudge",
    "RejectionCell",
    "RejectionStats",
    "RunRecords",
    "TurnUniqueness",
    "TypeShares",
    "Uniqueness",
    "acceptance",
    "analyse",
    "analyse_groups",
    "flatten",
    "lapse_stats",
    "metric_curves",
    "normalise",
    "pair_accuracy",
    "pair_similarities",
    "question_flow",
    "question_uniqueness",
    "rejection_stats",
    "seed_key",
    "to_data",
    "type_shares",
]
