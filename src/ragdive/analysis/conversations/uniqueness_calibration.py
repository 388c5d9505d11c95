"""Calibrating the uniqueness analysis's same-question threshold on human duplicate labels.

Labels are one row per question: the document (seed set) and turn it was asked at, the run (repeat) it came from,
its text, and ``same_as_runs``: the other runs whose question at that document and turn people judged to be the same
question. From them:

- the people's per-turn unique share, counted as the RAG-DIVE paper counts it (a question is unique when its own
  ``same_as_runs`` is empty), and
- every pair of runs at one document and turn, "same" when either names the other.

Each candidate threshold of a similarity (word overlap, an embedding's cosine) is scored by Cohen's kappa with the
people over those pairs, and by its per-turn unique shares (unique: no other run's question at that document and
turn reaches the threshold) against theirs. The best threshold has the highest kappa; a tie goes to the smaller
largest share gap, then to the middle of the tied thresholds.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

from ...errors import ConfigError
from .uniqueness import Embedder, normalise, pair_similarities

THRESHOLDS = tuple(round(t, 3) for t in np.arange(0.05, 1.0, 0.005))
"""The thresholds tried."""


@dataclass(frozen=True)
class LabelledQuestion:
    document: str
    turn: int
    run: int
    text: str
    same_as_runs: tuple[int, ...]


@dataclass(frozen=True)
class ThresholdAgreement:
    threshold: float
    kappa: float | None
    """Cohen's kappa with the people over the pairs (None when either side calls every pair alike)."""
    agreement: float
    """Share of pairs decided as the people decided them."""
    shares: dict[int, float]
    """Per-turn unique share at this threshold."""
    largest_share_gap: float
    """Largest absolute difference from the people's per-turn shares."""


@dataclass(frozen=True)
class UniquenessCalibration:
    method: str
    questions: int
    pairs: int
    same_pairs: int
    """Pairs the people judged the same."""
    human_shares: dict[int, float]
    best: ThresholdAgreement
    at: dict[float, ThresholdAgreement]
    """Every threshold tried."""


def read_labels(path: Path) -> list[LabelledQuestion]:
    """CSV or JSONL rows with document, turn, run, text and same_as_runs (a JSON list, or run numbers separated by
    commas or semicolons; empty: unique). A row without ``text`` may give ``standalone_question``."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the labels ({exc.strerror or exc})") from exc
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(raw.splitlines()))
    else:
        try:
            rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: not JSON lines ({exc.msg}, line {exc.lineno}); use .csv for CSV") from exc
    out = [_question(row, path, n) for n, row in enumerate(rows, 1)]
    if not out:
        raise ConfigError(f"{path}: no labelled questions")
    return out


def _question(row: dict[str, object], path: Path, n: int) -> LabelledQuestion:
    text = row.get("text") or row.get("standalone_question")
    missing = [k for k in ("document", "turn", "run") if row.get(k) in (None, "")] + ([] if text else ["text"])
    if missing:
        raise ConfigError(f"{path}: row {n} has no {', '.join(missing)}")
    try:
        return LabelledQuestion(
            document=str(row["document"]),
            turn=int(str(row["turn"])),
            run=int(str(row["run"])),
            text=str(text),
            same_as_runs=_runs(row.get("same_as_runs")),
        )
    except ValueError as exc:
        raise ConfigError(f"{path}: row {n}: turn, run and same_as_runs must be whole numbers ({exc})") from exc


def _runs(value: object) -> tuple[int, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, list):
        return tuple(int(v) for v in value)
    text = str(value).strip()
    if text.startswith("["):
        return tuple(int(v) for v in json.loads(text))
    return tuple(int(v) for v in text.replace(";", ",").split(",") if v.strip())


def calibrate(
    labels: list[LabelledQuestion], embed: Embedder, *, method: str, thresholds: tuple[float, ...] = THRESHOLDS
) -> UniquenessCalibration:
    """Every threshold's agreement with the people, and the best one (see the module)."""
    cells: dict[tuple[str, int], dict[int, LabelledQuestion]] = defaultdict(dict)
    for q in labels:
        cells[q.document, q.turn][q.run] = q
    pairs = [(key, a, b) for key, cell in cells.items() for a, b in combinations(sorted(cell), 2)]
    if not pairs:
        raise ConfigError("the labels hold no two runs at the same document and turn: nothing to calibrate on")
    human = np.array([b in cells[k][a].same_as_runs or a in cells[k][b].same_as_runs for k, a, b in pairs])
    texts = [(cells[k][a].text, cells[k][b].text) for k, a, b in pairs]
    similarity = pair_similarities(texts, embed)
    identical = np.array([normalise(x) == normalise(y) for x, y in texts])
    human_shares = _shares(cells, lambda cell: bool(cells[cell[0]][cell[1]].same_as_runs))
    at = {}
    for threshold in thresholds:
        same = (similarity >= threshold) | identical
        repeated = {(k, run) for (k, a, b), s in zip(pairs, same, strict=True) if s for run in (a, b)}
        shares = _shares(cells, repeated.__contains__)
        gap = max(abs(shares[t] - human_shares[t]) for t in human_shares)
        agreement = float(np.mean(same == human))
        at[float(threshold)] = ThresholdAgreement(float(threshold), _kappa(same, human), agreement, shares, gap)
    return UniquenessCalibration(method, len(labels), len(pairs), int(human.sum()), human_shares, _best(at), at)


def _best(at: dict[float, ThresholdAgreement]) -> ThresholdAgreement:
    """Highest kappa, then smallest share gap; of the thresholds tied on both, the middle one (the plateau's
    centre is the choice least moved by a small change in the data)."""

    def rank(a: ThresholdAgreement) -> tuple[float, float]:
        return (round(a.kappa, 9) if a.kappa is not None else -2.0, -round(a.largest_share_gap, 9))

    top = max(rank(a) for a in at.values())
    tied = sorted(t for t, a in at.items() if rank(a) == top)
    return at[tied[(len(tied) - 1) // 2]]


def _shares(
    cells: dict[tuple[str, int], dict[int, LabelledQuestion]], repeated: Callable[[tuple[tuple[str, int], int]], bool]
) -> dict[int, float]:
    """Per-turn share of questions that are not ``repeated((key, run))``."""
    asked: dict[int, int] = defaultdict(int)
    unique: dict[int, int] = defaultdict(int)
    for key, cell in cells.items():
        if len(cell) < 2:
            continue  # nothing to compare it with
        for run in cell:
            asked[key[1]] += 1
            unique[key[1]] += not repeated((key, run))
    return {turn: unique[turn] / asked[turn] for turn in sorted(asked)}


def _kappa(predicted: np.ndarray, human: np.ndarray) -> float | None:
    observed = float(np.mean(predicted == human))
    p, h = float(np.mean(predicted)), float(np.mean(human))
    expected = p * h + (1 - p) * (1 - h)
    return None if expected >= 1.0 else (observed - expected) / (1 - expected)
