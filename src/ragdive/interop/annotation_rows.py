"""What a rater sees: a stratified, seeded sample of accepted turns, each with the source-document excerpt around
its evidence and the conversation so far, and the dialogues those turns come from.

Reads records only; the caller passes the documents' text (the corpus is not part of the run directory), and
without it a row shows the evidence quotes alone and says so."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..errors import ConfigError
from ..records import Conversation, Turn, item_id

SampleBy = Literal["turn", "conversation"]
EXCERPT_MARGIN = 400
"""Characters of the document shown on each side of an evidence quote."""
CELL_LIMIT = 32_000
"""Excel holds at most 32,767 characters in a cell; longer text is cut with a note."""


@dataclass(frozen=True)
class TurnItem:
    item_id: str
    conversation_id: str
    turn: int
    """Counted from 1."""
    question_type: str
    document_excerpt: str
    conversation_so_far: str
    user_message: str
    standalone_question: str
    ground_truth: str
    answer: str
    retrieved_contexts: str


@dataclass(frozen=True)
class DialogueItem:
    item_id: str
    conversation_id: str
    turns: int
    dialogue: str


def accepted_turns(conversations: list[Conversation]) -> list[tuple[Conversation, Turn]]:
    """Turns the validator accepted: a turn kept only because its attempts ran out was not accepted."""
    return [(c, t) for c in conversations for t in c.turns if not t.validator_overruled]


def sample_turns(
    conversations: list[Conversation], size: int, *, by: SampleBy = "turn", seed: int = 1
) -> list[tuple[Conversation, Turn]]:
    """``size`` accepted turns, the same for the same run and seed, in conversation order.

    by turn: stratified by (turn number, question type), each stratum's share of the sample proportional to its
    share of the turns (largest remainder), so late turns and rare types (correction, comparative) are there in
    the proportion the run has them. by conversation: whole conversations drawn at random until ``size`` turns."""
    if size < 1:
        raise ConfigError(f"annotate: --sample must be at least 1, got {size}")
    pool = accepted_turns(conversations)
    if not pool:
        raise ConfigError("annotate: the run has no accepted turns to sample")
    rng = random.Random(seed)
    order = {c.id: i for i, c in enumerate(conversations)}
    if by == "conversation":
        ids = sorted({c.id for c, _ in pool})
        rng.shuffle(ids)
        picked: list[tuple[Conversation, Turn]] = []
        for cid in ids:
            if len(picked) >= size:
                break
            picked += [(c, t) for c, t in pool if c.id == cid]
        chosen = picked
    elif by == "turn":
        chosen = _stratified(pool, size, rng)
    else:
        raise ConfigError(f"annotate: --by must be turn or conversation, got {by!r}")
    return sorted(chosen, key=lambda ct: (order[ct[0].id], ct[1].index))


def _stratified(
    pool: list[tuple[Conversation, Turn]], size: int, rng: random.Random
) -> list[tuple[Conversation, Turn]]:
    strata: dict[tuple[int, str], list[tuple[Conversation, Turn]]] = defaultdict(list)
    for c, t in pool:
        strata[(t.index, str(t.question_type))].append((c, t))
    keys = sorted(strata)
    size = min(size, len(pool))
    exact = {k: size * len(strata[k]) / len(pool) for k in keys}
    quota = {k: int(exact[k]) for k in keys}
    # largest remainder; ties go to the earlier stratum, so the allocation does not depend on dict order
    for k in sorted(keys, key=lambda k: -(exact[k] - quota[k]))[: size - sum(quota.values())]:
        quota[k] += 1
    chosen = []
    for k in keys:
        members = sorted(strata[k], key=lambda ct: (ct[0].id, ct[1].index))
        rng.shuffle(members)
        chosen += members[: quota[k]]
    return chosen


def excerpt(evidence: list[str], documents: Mapping[str, str], document_ids: list[str]) -> str:
    """Each evidence quote in its surroundings in the source document, the quote between »«; the quote alone
    (with a note) when the document is not at hand or does not contain it verbatim."""
    texts = [(d, documents[d]) for d in document_ids if d in documents]
    if not evidence:
        if not texts:
            return "(no evidence quoted; document not available)"
        d, text = texts[0]
        return f"(no evidence quoted) [{d}] {_cut(text, 2 * EXCERPT_MARGIN)}"
    parts = []
    for quote in evidence:
        for d, text in texts:
            at = text.find(quote)
            if at >= 0:
                start, end = max(0, at - EXCERPT_MARGIN), min(len(text), at + len(quote) + EXCERPT_MARGIN)
                before = ("…" if start else "") + text[start:at]
                after = text[at + len(quote) : end] + ("…" if end < len(text) else "")
                parts.append(f"[{d}] {before}»{quote}«{after}")
                break
        else:
            note = "not found verbatim in the document" if texts else "document not available"
            parts.append(f"»{quote}« ({note})")
    return "\n\n".join(parts)


def _cut(text: str, limit: int = CELL_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 20] + "… (cut)"


def _exchange(turn: Turn) -> str:
    answer = turn.answer if turn.answer is not None else f"(no answer: {turn.error or 'target failed'})"
    return f"User: {turn.rag_input}\nRAG: {answer}"


def turn_item(run_id: str, conversation: Conversation, turn: Turn, documents: Mapping[str, str]) -> TurnItem:
    earlier = [t for t in conversation.turns if t.index < turn.index]
    contexts = "\n\n".join(f"[{i}] {c.text}" for i, c in enumerate(turn.contexts, start=1))
    return TurnItem(
        item_id=item_id(run_id, conversation.id, turn.index),
        conversation_id=conversation.id,
        turn=turn.index + 1,
        question_type=str(turn.question_type),
        document_excerpt=_cut(excerpt(turn.evidence, documents, conversation.document_ids)),
        conversation_so_far=_cut("\n\n".join(_exchange(t) for t in earlier) or "(first turn)"),
        user_message=_cut(turn.rag_input),
        standalone_question=_cut(turn.standalone_question),
        ground_truth=_cut(turn.ground_truth),
        answer=_cut(turn.answer if turn.answer is not None else f"(no answer: {turn.error or 'target failed'})"),
        retrieved_contexts=_cut(contexts or "(none)"),
    )


def dialogue_item(run_id: str, conversation: Conversation) -> DialogueItem:
    return DialogueItem(
        item_id=item_id(run_id, conversation.id),
        conversation_id=conversation.id,
        turns=len(conversation.turns),
        dialogue=_cut("\n\n".join(_exchange(t) for t in conversation.turns)),
    )


def annotation_items(
    run_id: str,
    conversations: list[Conversation],
    documents: Mapping[str, str],
    *,
    size: int,
    by: SampleBy = "turn",
    seed: int = 1,
) -> tuple[list[TurnItem], list[DialogueItem]]:
    """The sampled turns and the dialogues they belong to."""
    sampled = sample_turns(conversations, size, by=by, seed=seed)
    turns = [turn_item(run_id, c, t, documents) for c, t in sampled]
    seen: dict[str, Conversation] = {}
    for c, _ in sampled:
        seen.setdefault(c.id, c)
    return turns, [dialogue_item(run_id, c) for c in seen.values()]
