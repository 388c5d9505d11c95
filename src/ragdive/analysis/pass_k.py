"""pass^k over repeats (τ-bench's reliability figure): a seed document's conversation passes when it meets every
threshold; pass^k is the share of documents whose conversation passes in *all* of k repeats, for k = 1..K.

Thresholds are the CI gate's sentences (config/gate.py): ``">= 0.8"`` or ``">= 0.8 per conversation"`` is the
conversation's value (a conversation-level metric's own value, a per-turn metric's mean over the conversation's
scored turns), ``">= 0.8 per turn"`` every scored turn of the conversation; an ``in at least K of N repeats`` part
is the gate's own rule over run means and is ignored here (pass^k *is* the over-repeats figure). A conversation
with no scored item of a threshold's metric has an *unknown* outcome in that repeat: it is left out of that
document's repeats, never counted as a fail (or a pass).

With n determined repeats of which c passed, a document's pass^k is C(c, k) / C(n, k): the chance that k repeats
drawn without replacement all pass. That is τ-bench's unbiased estimator; with k = n it is 1 when all n passed,
else 0. pass^k for a configuration is the mean over the documents with at least k determined repeats (n_documents
per k says how many). A document's conversations are matched across repeats by their seed documents, in plan
order when the same documents seed more than one conversation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from math import comb
from typing import Any

from ..config.gate import GateRule, parse_gate
from ..records import Conversation, Score
from .summary import RunScores


@dataclass(frozen=True)
class Threshold:
    metric: str
    rule: GateRule

    def __str__(self) -> str:
        return f"{self.metric} {self.rule.op} {self.rule.threshold:g}" + (
            " per turn" if self.rule.level == "turn" else ""
        )


def parse_thresholds(spec: Mapping[str, str | list[str]]) -> list[Threshold]:
    """Thresholds from the gate's YAML form ({metric: rule or [rules]}); ValueError on a rule it cannot read."""
    return [Threshold(metric, rule) for metric, rules in parse_gate(dict(spec)).items() for rule in rules]


def thresholds_from_config(config: Mapping[str, Any]) -> list[Threshold]:
    """A run's pass thresholds from its stored config: evaluation.pass_thresholds, else the CI gate's rules
    (evaluation.gate), else none."""
    evaluation = config.get("evaluation") or {}
    for key in ("pass_thresholds", "gate"):
        spec = evaluation.get(key)
        if isinstance(spec, Mapping) and spec:
            return parse_thresholds(spec)
    return []


def conversation_passes(scores: list[Score], thresholds: list[Threshold]) -> bool | None:
    """True when the conversation meets every threshold, False when it misses one, None when a threshold's metric
    has no scored item in it (and none is missed)."""
    unknown = False
    for t in thresholds:
        values = [float(s.value) for s in scores if s.metric == t.metric and s.value is not None]
        if not values:
            unknown = True
            continue
        rule = t.rule
        ok = all(rule.holds(v) for v in values) if rule.level == "turn" else rule.holds(sum(values) / len(values))
        if not ok:
            return False
    return None if unknown else True


def _tasks(run: RunScores) -> dict[tuple[tuple[str, ...], int], Conversation]:
    """The run's conversations keyed by their seed documents (and occurrence, in plan order)."""
    seen: dict[tuple[str, ...], int] = defaultdict(int)
    out = {}
    for conv in sorted(run.conversations, key=lambda c: c.index):
        docs = tuple(conv.document_ids)
        out[docs, seen[docs]] = conv
        seen[docs] += 1
    return out


@dataclass
class PassK:
    thresholds: list[str]
    repeats: int
    k: list[int] = field(default_factory=list)
    values: list[float | None] = field(default_factory=list)
    n_documents: list[int] = field(default_factory=list)
    """Documents with at least k determined repeats, per k."""
    undetermined: int = 0
    """(document, repeat) outcomes left out because a threshold's metric was unscored there."""
    per_document: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Document label -> (passed repeats, determined repeats)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "thresholds": self.thresholds,
            "repeats": self.repeats,
            "k": self.k,
            "values": self.values,
            "n_documents": self.n_documents,
            "undetermined": self.undetermined,
        }


def pass_k(runs: list[RunScores], thresholds: list[Threshold]) -> PassK:
    """pass^k for k = 1..len(runs) over a configuration's repeats (see the module's docstring)."""
    result = PassK([str(t) for t in thresholds], len(runs))
    if not thresholds or not runs:
        return result
    outcomes: dict[tuple[tuple[str, ...], int], list[bool]] = defaultdict(list)
    for run in runs:
        by_conv: dict[str, list[Score]] = defaultdict(list)
        for s in run.scores:
            by_conv[s.conversation_id].append(s)
        for key, conv in _tasks(run).items():
            passed = conversation_passes(by_conv.get(conv.id, []), thresholds)
            if passed is None:
                result.undetermined += 1
            else:
                outcomes[key].append(passed)
    for (docs, occurrence), flags in sorted(outcomes.items()):
        label = "+".join(docs) + (f" #{occurrence + 1}" if occurrence else "")
        result.per_document[label] = (sum(flags), len(flags))
    for k in range(1, len(runs) + 1):
        eligible = [(c, n) for c, n in result.per_document.values() if n >= k]
        result.k.append(k)
        result.n_documents.append(len(eligible))
        result.values.append(sum(comb(c, k) / comb(n, k) for c, n in eligible) / len(eligible) if eligible else None)
    return result
