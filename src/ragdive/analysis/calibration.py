"""How far to trust the judge: judge-human agreement per metric, and a prediction-powered estimate of the
metric's mean beside the plain judge mean.

Prediction-powered inference (PPI; Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered
inference", Science 382, 2023), as ARES applies it to LLM judges of RAG systems (Saad-Falcon et al., "ARES: An
Automated Evaluation Framework for Retrieval-Augmented Generation Systems", NAACL 2024): the judge's mean over the
items humans did not label, plus a *rectifier*, the mean of (human - judge) over the items they did label. The
judge supplies the many items, the humans remove its bias, and the interval is

    theta = mean_unlabelled(judge) + mean_labelled(human - judge)
    se^2  = var_unlabelled(judge) / N + var_labelled(human - judge) / n

(the PPI mean-estimation interval, normal approximation). It assumes the labelled items are a random sample of
the judged ones; the annotation sample is stratified with proportional allocation, which keeps that (close to)
true. A human label is the share of the item's raters who said yes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..records import CRITERIA, Annotation, Score
from .human import ItemKey, cohen_kappa, human_share, ratings_by_item

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    mean: float
    low: float
    high: float
    n: int

    def covers(self, value: float) -> bool:
        return self.low <= value <= self.high


@dataclass(frozen=True)
class Calibration:
    """One judge metric against the humans' label for it."""

    metric: str
    criterion: str
    labelled: int
    """Items with both a human label and a judge score."""
    judged: int
    """Items the judge scored, of those the sample was drawn from (the run's accepted turns)."""
    agreement: float | None
    """Share of labelled items where the judge (score >= 0.5) and the raters' majority agree; ties left out."""
    kappa: float | None
    judge: Estimate | None
    """The plain judge mean over every judged item, with its own CI: what the run reports."""
    humans: Estimate | None
    """The humans' mean over the labelled items alone (classical CI)."""
    ppi: Estimate | None
    """The prediction-powered mean: the judge on every item, corrected by the labelled sample."""
    disagreements: list[JudgeDisagreement] = field(default_factory=list)
    """The labelled items where the judge and the raters' majority differ."""
    agreed: int = 0
    """The numerator of ``agreement``."""
    decided: int = 0
    """Its denominator: labelled items whose raters were not split evenly."""


@dataclass(frozen=True)
class JudgeDisagreement:
    conversation_id: str
    turn_index: int | None
    judge: float
    humans: float
    """Share of the raters who said yes."""


def mean_ci(values: list[float], z: float = Z95) -> Estimate | None:
    if not values:
        return None
    n = len(values)
    mean = sum(values) / n
    se = math.sqrt(_var(values) / n)
    return _clipped(mean, se, z, n)


def _var(values: list[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return sum((v - mean) ** 2 for v in values) / (n - 1)


def ppi_mean(unlabelled: list[float], judge: list[float], human: list[float], z: float = Z95) -> Estimate | None:
    """PPI mean estimate: ``unlabelled`` are judge scores of items without a human label, ``judge``/``human``
    the paired scores of the labelled items. With no unlabelled item, the judge's labelled scores stand in."""
    if not human or len(judge) != len(human):
        return None
    pool = unlabelled or judge
    rectifier = [h - j for h, j in zip(human, judge, strict=True)]
    mean = sum(pool) / len(pool) + sum(rectifier) / len(rectifier)
    se = math.sqrt(_var(pool) / len(pool) + _var(rectifier) / len(rectifier))
    return _clipped(mean, se, z, len(pool) + len(rectifier))


def _clipped(mean: float, se: float, z: float, n: int) -> Estimate:
    """Every metric here is a share in [0, 1]: a normal interval (or a rectified mean) past either end says
    nothing a reader can use (faithfulness [0.545, 1.094]), so it is clipped to the scale."""
    return Estimate(_unit(mean), _unit(mean - z * se), _unit(mean + z * se), n)


def _unit(x: float) -> float:
    return min(1.0, max(0.0, x))


def calibrate(
    annotations: list[Annotation], scores: list[Score], frame: set[ItemKey] | None = None
) -> list[Calibration]:
    """Every judge metric some rater labelled (the optional answer_* criteria). ``frame`` is the set of items the
    labelled sample was drawn from (the accepted turns): the judge's items are taken from it alone, so the labelled
    items are a sample of the population the estimate is about."""
    found = []
    for c in CRITERIA:
        if c.metric is None:
            continue
        labels = {k: human_share(v) for k, v in ratings_by_item(annotations, c.name).items()}
        if not labels:
            continue
        judged: dict[ItemKey, float] = {
            (s.conversation_id, s.turn_index): s.value
            for s in scores
            if s.metric == c.metric
            and s.value is not None
            and (frame is None or (s.conversation_id, s.turn_index) in frame)
        }
        keys = [k for k in sorted(labels, key=str) if k in judged]
        paired = [(judged[k], labels[k]) for k in keys]
        unlabelled = [v for k, v in judged.items() if k not in labels]
        decided = [(j >= 0.5, h > 0.5) for j, h in paired if h != 0.5]
        found.append(
            Calibration(
                metric=c.metric,
                criterion=c.name,
                labelled=len(paired),
                judged=len(judged),
                agreement=sum(a == b for a, b in decided) / len(decided) if decided else None,
                agreed=sum(a == b for a, b in decided),
                decided=len(decided),
                kappa=cohen_kappa([a for a, _ in decided], [b for _, b in decided]),
                judge=mean_ci(list(judged.values())),
                humans=mean_ci([h for _, h in paired]),
                ppi=ppi_mean(unlabelled, [j for j, _ in paired], [h for _, h in paired]),
                disagreements=[
                    JudgeDisagreement(k[0], k[1], judged[k], labels[k])
                    for k in keys
                    if labels[k] != 0.5 and (judged[k] >= 0.5) != (labels[k] > 0.5)
                ],
            )
        )
    return found
