"""Human validation of a run: the paper's Table 1 (share of "yes" per criterion, per rater and averaged), agreement
between raters, and the turns where the humans disagree with the validator or the generator.

Records in, numbers out. Cohen's kappa is a few lines and computed here; Krippendorff's alpha (more than two
raters, missing ratings allowed) comes from the `krippendorff` package, a small maintained implementation."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from ..records import CRITERIA, Annotation, Conversation

ItemKey = tuple[str, int | None]
"""(conversation id, turn index or None for a dialogue)."""


@dataclass(frozen=True)
class Share:
    yes: int
    rated: int

    @property
    def share(self) -> float | None:
        return self.yes / self.rated if self.rated else None


@dataclass(frozen=True)
class CriterionShares:
    """One column of Table 1: each rater's share of yes, and their average."""

    criterion: str
    level: str
    by_rater: dict[str, Share]

    @property
    def average(self) -> float | None:
        shares = [s.share for s in self.by_rater.values() if s.share is not None]
        return sum(shares) / len(shares) if shares else None


@dataclass(frozen=True)
class Agreement:
    """How far the raters agree on one criterion, over the items at least two of them rated."""

    criterion: str
    raters: int
    items: int
    raw: float | None
    """Share of items on which every rater who rated it gave the same answer."""
    kappa: float | None = None
    """Cohen's kappa, with exactly two raters; None when undefined (a rater gave one answer throughout)."""
    alpha: float | None = None
    """Krippendorff's alpha (nominal), with three or more raters."""
    note: str = ""


@dataclass(frozen=True)
class Disagreement:
    """A turn where the humans' verdict differs from what the pipeline decided."""

    conversation_id: str
    turn_index: int
    criterion: str
    humans: float
    """Share of the raters who said yes."""
    pipeline: str
    """What the pipeline said: the validator accepted it, or the generator marked it a probe."""


@dataclass
class HumanValidation:
    raters: list[str]
    shares: list[CriterionShares]
    agreement: list[Agreement]
    disagreements: list[Disagreement] = field(default_factory=list)
    items: int = 0


def ratings_by_item(annotations: list[Annotation], criterion: str) -> dict[ItemKey, dict[str, bool]]:
    found: dict[ItemKey, dict[str, bool]] = defaultdict(dict)
    for a in annotations:
        if a.criterion == criterion:
            found[(a.conversation_id, a.turn_index)][a.rater] = a.value
    return dict(found)


def cohen_kappa(first: list[bool], second: list[bool]) -> float | None:
    """Cohen (1960): (observed - chance agreement) / (1 - chance), chance from each rater's own yes rate."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    p1, p2 = sum(first) / n, sum(second) / n
    chance = p1 * p2 + (1 - p1) * (1 - p2)
    return None if math.isclose(chance, 1.0) else (observed - chance) / (1 - chance)


def krippendorff_alpha(matrix: list[list[float]]) -> float | None:
    """Nominal alpha over a raters x items matrix (NaN where a rater did not rate); None when undefined."""
    import krippendorff
    import numpy as np

    data = np.array(matrix, dtype=float)
    if np.isnan(data).all() or len(np.unique(data[~np.isnan(data)])) < 2:
        return None  # one value throughout: alpha divides by zero
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def agreement(criterion: str, annotations: list[Annotation]) -> Agreement:
    items = {k: v for k, v in ratings_by_item(annotations, criterion).items() if len(v) >= 2}
    raters = sorted({r for v in items.values() for r in v})
    if not items:
        return Agreement(criterion, len(raters), 0, None, note="no item rated by two raters")
    raw = sum(len(set(v.values())) == 1 for v in items.values()) / len(items)
    if len(raters) == 2:
        both = [v for v in items.values() if len(v) == 2]
        kappa = cohen_kappa([v[raters[0]] for v in both], [v[raters[1]] for v in both])
        return Agreement(
            criterion,
            2,
            len(items),
            raw,
            kappa=kappa,
            note="" if kappa is not None else "kappa undefined: a rater gave the same answer on every item",
        )
    try:
        matrix = [[float(v[r]) if r in v else math.nan for v in items.values()] for r in raters]
        alpha = krippendorff_alpha(matrix)
    except ImportError:
        return Agreement(criterion, len(raters), len(items), raw, note="alpha needs the krippendorff package")
    return Agreement(criterion, len(raters), len(items), raw, alpha=alpha)


def human_share(ratings: dict[str, bool]) -> float:
    return sum(ratings.values()) / len(ratings)


def pipeline_disagreements(annotations: list[Annotation], conversations: list[Conversation]) -> list[Disagreement]:
    """Turns the validator accepted that most raters said no to (wrong ground truth, unanswerable, implausible),
    and the generator's probe flag against the raters' answerability."""
    turns = {(c.id, t.index): t for c in conversations for t in c.turns}
    found = []
    for criterion in ("correct", "answerable", "plausible"):
        for (cid, index), ratings in sorted(ratings_by_item(annotations, criterion).items(), key=str):
            turn = turns.get((cid, index)) if index is not None else None
            if turn is None or index is None:
                continue
            share = human_share(ratings)
            probe = turn.unanswerable
            if criterion == "answerable" and probe and share > 0.5:
                found.append(Disagreement(cid, index, criterion, share, "generator marked it unanswerable"))
            elif share < 0.5 and not turn.validator_overruled and not (criterion == "answerable" and probe):
                found.append(Disagreement(cid, index, criterion, share, "validator accepted it"))
    return found


def human_validation(annotations: list[Annotation], conversations: list[Conversation]) -> HumanValidation:
    raters = sorted({a.rater for a in annotations})
    shares = []
    for c in CRITERIA:
        counts: dict[str, list[int]] = {r: [0, 0] for r in raters}
        for a in annotations:
            if a.criterion == c.name:
                counts[a.rater][0] += a.value
                counts[a.rater][1] += 1
        if any(n for _, n in counts.values()):
            shares.append(CriterionShares(c.name, c.level, {r: Share(y, n) for r, (y, n) in counts.items()}))
    return HumanValidation(
        raters=raters,
        shares=shares,
        agreement=[agreement(s.criterion, annotations) for s in shares],
        disagreements=pipeline_disagreements(annotations, conversations),
        items=len({(a.conversation_id, a.turn_index) for a in annotations}),
    )
