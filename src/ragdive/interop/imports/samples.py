"""Ragas and DeepEval sample files as imported runs (formats ``ragas`` and ``deepeval``).

- ``ragas``: an ``EvaluationDataset`` as JSONL, one sample per line. A ``SingleTurnSample`` (``user_input`` text,
  ``response``, ``retrieved_contexts``, ``reference``) becomes a one-turn conversation; a ``MultiTurnSample``
  (``user_input`` a list of ``{"content", "type": "human" | "ai" | "tool"}`` messages, ``reference``) becomes a
  conversation, one turn per human message and the AI message after it. Score columns (numbers beside the
  sample's fields, as ``EvaluationResult.to_pandas()`` writes them) become scores.
- ``deepeval``: a JSON list (or ``{"test_cases": [...]}``) of ``LLMTestCase`` fields (``input``, ``actual_output``,
  ``expected_output``, ``retrieval_context``) or of ``ConversationalTestCase`` fields (``turns`` of
  ``{"role": "user" | "assistant", "content", "retrieval_context"}``, ``scenario``, ``expected_outcome``).
  Scores written by ``ragdive export --format deepeval`` (``additional_metadata.ragdive.scores``) come back too.

What the sources lack stays unknown: later turns' question type is ``unknown``, a missing reference is an empty
ground truth (said in the notes), tokens are unknown. Made-up ids, seeds and stand-alone questions are listed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...case_files import case_rows
from ...errors import ConfigError
from ...records import Context, Conversation, QuestionType, Score, Turn
from .base import ImportedRun, make_score, read_jsonl, text

RAGAS, RAGAS_VERSION = "ragas", 1
DEEPEVAL, DEEPEVAL_VERSION = "deepeval", 1

RAGAS_FIELDS = {
    "user_input",
    "retrieved_contexts",
    "reference_contexts",
    "retrieved_context_ids",
    "reference_context_ids",
    "response",
    "multi_responses",
    "reference",
    "rubrics",
    "reference_tool_calls",
    "persona_name",
    "query_style",
    "query_length",
    "synthesizer_name",
}
RAGAS_METRICS = {"llm_context_precision_with_reference": "context_precision", "llm_context_recall": "context_recall"}
"""Ragas column names that are ragdive metrics under another name; other score columns keep their name."""


@dataclass
class Exchange:
    """One user message, the answer to it (None when the source has none) and the contexts behind it."""

    message: str
    answer: str | None
    contexts: list[str] = field(default_factory=list)


@dataclass
class Sample:
    """One test item in either tool's shape, before it becomes a conversation."""

    where: str
    exchanges: list[Exchange]
    reference: str | None
    single_turn: bool
    persona: str | None = None
    document_ids: list[str] = field(default_factory=list)
    """Seed documents, when the source names them (a ragdive export does): compare pairs on them."""
    scores: dict[str, Any] = field(default_factory=dict)
    """metric → raw value (conversation-level for a multi-turn sample, the turn's for a single-turn one)."""


def read_ragas(paths: list[Path]) -> ImportedRun:
    samples: list[Sample] = []
    for path in paths:
        rows = read_jsonl(path)
        score_columns = _score_columns(rows, RAGAS_FIELDS)
        for number, row in enumerate(rows, 1):
            samples.append(_ragas_sample(row, f"{path}:{number}", score_columns))
    return _to_run(samples, RAGAS, {p.name: "ragas samples" for p in paths})


def _score_columns(rows: list[dict[str, Any]], known: set[str]) -> list[str]:
    """Columns outside the sample's fields holding a number in some row (null or nan elsewhere: unscored)."""
    columns: dict[str, None] = {}
    for row in rows:
        for key, value in row.items():
            if key not in known and isinstance(value, (int, float)) and not isinstance(value, bool):
                columns[key] = None
    return list(columns)


def _ragas_sample(row: dict[str, Any], where: str, score_columns: list[str]) -> Sample:
    scores = {RAGAS_METRICS.get(c, c): row.get(c) for c in score_columns if c in row}
    persona = row.get("persona_name") if isinstance(row.get("persona_name"), str) else None
    reference = row.get("reference") if isinstance(row.get("reference"), str) else None
    user_input = row.get("user_input")
    if isinstance(user_input, str):
        answer = row.get("response")
        contexts = row.get("retrieved_contexts") or []
        return Sample(
            where,
            [Exchange(user_input, text(answer, f"{where}: response", required=False) or None, _texts(contexts, where))],
            reference,
            single_turn=True,
            persona=persona,
            scores=scores,
        )
    if not isinstance(user_input, list):
        raise ConfigError(f"{where}: user_input must be a question (single-turn) or a list of messages (multi-turn)")
    exchanges: list[Exchange] = []
    for k, message in enumerate(user_input):
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise ConfigError(f"{where}: user_input[{k}]: expected a message with text content")
        kind = message.get("type")
        if kind == "human":
            exchanges.append(Exchange(message["content"], None))
        elif kind == "ai":
            if not exchanges or exchanges[-1].answer is not None:
                raise ConfigError(f"{where}: user_input[{k}]: an AI message that answers no human message")
            exchanges[-1].answer = message["content"]
        elif kind != "tool":  # tool messages have no place in a RAG turn; the notes count them
            raise ConfigError(f"{where}: user_input[{k}]: message type {kind!r}; expected human, ai or tool")
    if not exchanges:
        raise ConfigError(f"{where}: a multi-turn sample without a human message")
    return Sample(where, exchanges, reference, single_turn=False, persona=persona, scores=scores)


def read_deepeval(paths: list[Path]) -> ImportedRun:
    samples: list[Sample] = []
    for path in paths:
        for n, case in enumerate(case_rows(path, what="deepeval file")):  # one reader, shared with `static`
            samples.append(_deepeval_sample(case, f"{path}: test case {n + 1}"))
    return _to_run(samples, DEEPEVAL, {p.name: "deepeval test cases" for p in paths})


def _deepeval_sample(case: dict[str, Any], where: str) -> Sample:
    meta = case.get("metadata") or case.get("additional_metadata")  # deepeval 4 / deepeval 1-3
    ours: dict[str, Any] = {}
    if isinstance(meta, dict) and isinstance(meta.get("ragdive"), dict):
        ours = meta["ragdive"]
    scores = dict(ours.get("scores") or {})
    persona = ours.get("persona") if isinstance(ours.get("persona"), str) else None
    docs = ours.get("document_ids")
    documents = [str(d) for d in docs] if isinstance(docs, list) else []
    if "turns" not in case:
        answer = case.get("actual_output")
        return Sample(
            where,
            [
                Exchange(
                    text(case.get("input"), f"{where}: input"),
                    text(answer, f"{where}: actual_output", required=False) or None,
                    _texts(case.get("retrieval_context") or [], where),
                )
            ],
            case.get("expected_output") if isinstance(case.get("expected_output"), str) else None,
            single_turn=True,
            persona=persona,
            document_ids=documents,
            scores=scores,
        )
    turns = case["turns"]
    if not isinstance(turns, list):
        raise ConfigError(f"{where}: turns: expected a list")
    exchanges: list[Exchange] = []
    for k, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("content"), str):
            raise ConfigError(f"{where}: turns[{k}]: expected a turn with text content")
        if turn.get("role") == "user":
            exchanges.append(Exchange(turn["content"], None))
        elif turn.get("role") == "assistant":
            if not exchanges or exchanges[-1].answer is not None:
                raise ConfigError(f"{where}: turns[{k}]: an assistant turn that answers no user turn")
            exchanges[-1].answer = turn["content"]
            exchanges[-1].contexts = _texts(turn.get("retrieval_context") or [], f"{where}: turns[{k}]")
        else:
            raise ConfigError(f"{where}: turns[{k}]: role {turn.get('role')!r}; expected user or assistant")
    if not exchanges:
        raise ConfigError(f"{where}: a conversational test case without a user turn")
    outcome = case.get("expected_outcome")
    return Sample(where, exchanges, outcome if isinstance(outcome, str) else None, False, persona, documents, scores)


def _texts(raw: Any, where: str) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise ConfigError(f"{where}: contexts: expected a list of texts")
    return list(raw)


def _to_run(samples: list[Sample], source: str, roles: dict[str, str]) -> ImportedRun:
    if not samples:
        raise ConfigError(f"{source}: the files hold no samples")
    kinds = {s.single_turn for s in samples}
    if len(kinds) > 1:
        raise ConfigError(f"{source}: the files mix single-turn and multi-turn samples; import them as two runs")
    single = kinds == {True}
    conversations, scores = [], []
    for n, sample in enumerate(samples):
        conversation = _conversation(n, sample, single)
        conversations.append(conversation)
        for metric, raw in sample.scores.items():
            turn = 0 if single else None
            scores.append(_score(conversation.id, turn, metric, raw, f"{sample.where}: {metric}", source))
    if all(t.answer is None for c in conversations for t in c.turns):
        raise ConfigError(
            f"{source}: no sample has an answer, so there is no run to import; a question set is asked with "
            "`ragdive static FILE --config EXPERIMENT`"
        )
    run = ImportedRun(conversations, scores, shape="single-turn" if single else "conversations", roles=roles)
    run.invented += [
        "conversation ids: the source has none; s00000, s00001... in file order",
        "conversation seeds: the source has none; each is the conversation's position",
        "conversation start and finish times: the source has none; the time of the import",
    ]
    if not single:
        run.invented.append(
            "stand-alone questions after the first turn: the source has none; the message as sent "
            "(the first turn's is that message by definition)"
        )
        run.notes.append("question types after the first turn are unknown: the source does not give them")
        run.notes.append("ground truths per turn are unknown (empty): the source has one reference per conversation")
    missing = sum(s.reference is None for s in samples)
    if single and missing:
        run.notes.append(f"{missing} sample(s) have no reference: their ground truth is empty (unknown)")
    unanswered = sum(t.answer is None for c in conversations for t in c.turns)
    if unanswered:
        run.notes.append(f"{unanswered} turn(s) have no answer in the source: recorded as failed turns")
    unscored = sum(not s.scored for s in scores)
    if unscored:
        run.notes.append(f"{unscored} score(s) were empty or nan in the source: stored as unscored, never as 0")
    return run


def _conversation(n: int, sample: Sample, single: bool) -> Conversation:
    turns = []
    for i, exchange in enumerate(sample.exchanges):
        turns.append(
            Turn(
                index=i,
                rag_input=exchange.message,
                standalone_question=exchange.message,
                ground_truth=(sample.reference or "") if single else "",
                question_type=QuestionType.INITIAL if i == 0 else QuestionType.UNKNOWN,
                answer=exchange.answer,
                error=None if exchange.answer is not None else "the source has no answer for this turn",
                contexts=[Context(text=c) for c in exchange.contexts],
                # the source kept no validator loop and no probe flag: unknown, never False
                unanswerable=None,
                validator_overruled=None,
            )
        )
    conversation = Conversation(
        id=f"s{n:05d}",
        index=n,
        persona=sample.persona or "unknown",
        document_ids=sample.document_ids,
        seed=n,
        turns=turns,
    )
    if not single and sample.reference is not None:
        # a multi-turn sample's one reference for the whole conversation: kept beside it (records keep extras)
        conversation = Conversation.model_validate({**conversation.model_dump(), "reference": sample.reference})
    return conversation


def _score(conversation_id: str, turn: int | None, metric: str, raw: Any, where: str, source: str) -> Score:
    if isinstance(raw, float) and math.isnan(raw):
        raw = None
    return make_score(conversation_id, turn, metric, raw, where, source)
