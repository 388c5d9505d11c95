"""The RAG-DIVE reference implementation's output (format ``ragdive-reference``).

- A conversation file is a JSON list of ``{"title", "document", "role", "conversation": [turn...]}`` where a turn is
  ``{"rag_input", "question", "answer", "type", "rag_answer", "context": [{"id", "metadata", "page_content"}],
  "index"}``: the message sent, its stand-alone form, the ground truth, the question type, the RAG's answer and
  its retrieved documents.
- An evaluation file is ``{"file_path", "average_scores" (or "average_<metric>" keys), "detailed_results"}``.
  Its single-turn rows (one per turn, in order; ``content`` is the stand-alone question) carry
  ``correctness_aspect_critic``, ``faithfulness_aspect_critic``, ``context_precision_critic`` and
  ``context_recall_critic``; its multi-turn rows (one per message, user and RAG in turn, the conversation's
  verdict repeated on each) carry ``forgetfulness_aspect_critic`` and ``context_retention_aspect_critic``.
  Neither names its conversation: rows are matched to turns by order, and their text is checked against the
  conversation file so that a shuffled or foreign file is refused rather than misattributed.

``file_path`` names the conversation file it judged (a path on another machine: only its name is compared).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...records import Context, Conversation, QuestionType, Score, Turn
from .base import ImportedRun, make_score, question_type, read_json, text

NAME = "ragdive-reference"
VERSION = 1

SINGLE_TURN_METRICS = {
    "correctness_aspect_critic": "correctness",
    "faithfulness_aspect_critic": "faithfulness",
    "context_precision_critic": "context_precision",
    "context_recall_critic": "context_recall",
}
MULTI_TURN_METRICS = {
    "forgetfulness_aspect_critic": "forgetfulness",
    "context_retention_aspect_critic": "context_retention",
}


def read_reference(paths: list[Path]) -> ImportedRun:
    """Conversation files and the evaluation files that judged them, in any order."""
    loaded = [(path, read_json(path)) for path in paths]
    conversation_files = [(p, data) for p, data in loaded if isinstance(data, list)]
    evaluation_files = [(p, data) for p, data in loaded if isinstance(data, dict)]
    for path, data in loaded:
        if not isinstance(data, (list, dict)):
            raise ConfigError(f"{path}: expected a conversation list or an evaluation object")
    if not conversation_files:
        raise ConfigError("ragdive-reference: give at least one conversation file (a JSON list of conversations)")
    run = ImportedRun(conversations=[])
    by_file: dict[str, list[Conversation]] = {}
    for path, data in conversation_files:
        conversations = _conversations(path, data, first_index=len(run.conversations))
        if path.name in by_file:
            raise ConfigError(f"{path}: two conversation files are named {path.name}")
        by_file[path.name] = conversations
        run.conversations += conversations
        run.roles[path.name] = "conversations"
    unknown_types = sum(t.question_type == QuestionType.UNKNOWN for c in run.conversations for t in c.turns)
    if unknown_types:
        run.notes.append(f"{unknown_types} turn(s) had no question type ragdive knows: stored as 'unknown'")
    seen: set[tuple[str, str]] = set()
    for path, data in evaluation_files:
        target = _judged_file(path, data, by_file)
        kind, scores, averages = _evaluation(path, data, by_file[target])
        if (target, kind) in seen:
            raise ConfigError(f"{path}: a second {kind} evaluation of {target}")
        seen.add((target, kind))
        run.scores += scores
        run.roles[path.name] = f"{kind} scores of {target}"
        run.notes += _average_check(path, averages, scores)
    unscored = sum(not s.scored for s in run.scores)
    if unscored:
        run.notes.append(f"{unscored} score(s) were nan in the source: stored as unscored, never as 0")
    run.invented += [
        "conversation ids: the source has none; c00000, c00001... in file order",
        "conversation seeds: the source has none; each is the conversation's position",
        "conversation start and finish times: the source has none; the time of the import",
    ]
    run.notes.append(
        "validator drafts and rejections are not in these files: turns have no attempts, rejections are unknown"
    )
    return run


def _conversations(path: Path, data: list[Any], first_index: int) -> list[Conversation]:
    out = []
    for n, item in enumerate(data):
        where = f"{path}: conversation {n + 1}"
        if not isinstance(item, dict) or not isinstance(item.get("conversation"), list):
            raise ConfigError(f"{where}: expected an object with a 'conversation' list")
        index = first_index + n
        title = text(item.get("title"), f"{where}: title", required=False).strip()
        out.append(
            Conversation(
                id=f"c{index:05d}",
                index=index,
                # the reference calls its persona a role; a missing one is unknown, not a made-up persona
                persona=text(item.get("role"), f"{where}: role", required=False).strip() or "unknown",
                document_ids=[title] if title else [],
                seed=index,
                turns=[_turn(t, i, f"{where}, turn {i + 1}") for i, t in enumerate(item["conversation"])],
                status="finished",
            )
        )
    return out


def _turn(raw: Any, index: int, where: str) -> Turn:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object")
    contexts = raw.get("context") or []
    if not isinstance(contexts, list):
        raise ConfigError(f"{where}: context: expected a list")
    answer = raw.get("rag_answer")
    return Turn(
        index=index,
        rag_input=text(raw.get("rag_input"), f"{where}: rag_input"),
        standalone_question=text(raw.get("question"), f"{where}: question"),
        ground_truth=text(raw.get("answer"), f"{where}: answer"),
        question_type=question_type(raw.get("type")) or QuestionType.UNKNOWN,
        answer=text(answer, f"{where}: rag_answer") if answer is not None else None,
        error=None if answer is not None else "the source has no answer for this turn",
        contexts=[_context(c, f"{where}, context {k + 1}") for k, c in enumerate(contexts)],
        # the source kept no validator loop and no probe flag: unknown, never False
        unanswerable=None,
        validator_overruled=None,
    )


def _context(raw: Any, where: str) -> Context:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object")
    metadata = raw.get("metadata")
    source = (metadata.get("title") or metadata.get("source")) if isinstance(metadata, dict) else None
    return Context(
        text=text(raw.get("page_content"), f"{where}: page_content"),
        id=None if raw.get("id") is None else str(raw["id"]),
        source=None if source is None else str(source),
    )


def _judged_file(path: Path, data: dict[str, Any], by_file: dict[str, list[Conversation]]) -> str:
    """The conversation file an evaluation file judged: the one its file_path names, or the only one given."""
    named = Path(str(data.get("file_path") or "")).name
    if named in by_file:
        return named
    if len(by_file) == 1:
        return next(iter(by_file))
    raise ConfigError(
        f"{path}: its file_path names {named or '(nothing)'}, which is none of the conversation files given "
        f"({', '.join(sorted(by_file))})"
    )


def _evaluation(
    path: Path, data: dict[str, Any], conversations: list[Conversation]
) -> tuple[str, list[Score], dict[str, Any]]:
    rows = data.get("detailed_results")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise ConfigError(f"{path}: expected a non-empty 'detailed_results' list of objects")
    given = data.get("average_scores")
    averages: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    averages.update({k.removeprefix("average_"): v for k, v in data.items() if k.startswith("average_")})
    averages.pop("scores", None)
    if any(key in rows[0] for key in MULTI_TURN_METRICS):
        return "multi-turn", _multi_turn(path, rows, conversations), averages
    if any(key in rows[0] for key in SINGLE_TURN_METRICS):
        return "single-turn", _single_turn(path, rows, conversations), averages
    raise ConfigError(f"{path}: its rows carry none of {', '.join([*SINGLE_TURN_METRICS, *MULTI_TURN_METRICS])}")


def _single_turn(path: Path, rows: list[dict[str, Any]], conversations: list[Conversation]) -> list[Score]:
    turns = [(c, t) for c in conversations for t in c.turns]
    if len(rows) != len(turns):
        raise ConfigError(f"{path}: {len(rows)} single-turn rows for {len(turns)} turns in the conversation file")
    scores = []
    for n, (row, (conversation, turn)) in enumerate(zip(rows, turns, strict=True)):
        where = f"{path}: detailed_results[{n}]"
        if str(row.get("content", "")).strip() != turn.standalone_question.strip():
            raise ConfigError(
                f"{where}: content is not the question of turn {turn.index + 1} of conversation "
                f"{conversation.index + 1} (rows are matched to turns in order)"
            )
        for key, metric in SINGLE_TURN_METRICS.items():
            if key in row:
                scores.append(make_score(conversation.id, turn.index, metric, row[key], f"{where}: {key}", NAME))
    return scores


def _multi_turn(path: Path, rows: list[dict[str, Any]], conversations: list[Conversation]) -> list[Score]:
    expected = sum(2 * len(c.turns) for c in conversations)
    if len(rows) != expected:
        raise ConfigError(f"{path}: {len(rows)} multi-turn rows; the conversations have {expected} messages")
    scores, at = [], 0
    for conversation in conversations:
        block = rows[at : at + 2 * len(conversation.turns)]
        messages = [m for t in conversation.turns for m in (t.rag_input, t.answer or "")]
        for k, (row, message) in enumerate(zip(block, messages, strict=True)):
            if str(row.get("content", "")).strip() != message.strip():
                raise ConfigError(
                    f"{path}: detailed_results[{at + k}]: content is not message {k + 1} of conversation "
                    f"{conversation.index + 1} (rows are matched to messages in order)"
                )
        for key, metric in MULTI_TURN_METRICS.items():
            values = {repr(row.get(key)) for row in block}
            where = f"{path}: detailed_results[{at}:{at + len(block)}]: {key}"
            if len(values) > 1:
                raise ConfigError(
                    f"{where}: differs between messages of one conversation ({', '.join(sorted(values))})"
                )
            if block and key in block[0]:
                scores.append(make_score(conversation.id, None, metric, block[0][key], where, NAME))
        at += len(block)
    return scores


def _average_check(path: Path, averages: dict[str, Any], scores: list[Score]) -> list[str]:
    """A note where the file's own average differs from the mean of its scored rows (nan rows make the
    reference's plain average nan; a multi-turn average weights a conversation by its number of messages)."""
    notes = []
    for key, average in averages.items():
        metric = SINGLE_TURN_METRICS.get(key) or MULTI_TURN_METRICS.get(key)
        values = [s.value for s in scores if s.metric == metric and s.value is not None]
        if metric is None or not values or not isinstance(average, (int, float)):
            continue
        mean = sum(values) / len(values)
        if math.isnan(average) or abs(mean - float(average)) > 1e-9:
            notes.append(
                f"{path.name}: its average {key} is {float(average):.6g}; the mean of its scored items is {mean:.6g}"
            )
    return notes
