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
import re
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...records import Context, Conversation, FailedCheck, QuestionType, Score, Turn
from .base import ImportedRun, make_score, question_type, read_json, text
from .validator_log import log_rejections, parse_log

NAME = "ragdive-reference"
VERSION = 2
"""2: evaluation files without conversation files, string contexts, unknown ground truth, validator logs."""

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
    """Conversation files, the evaluation files that judged them, a titles file and validator logs, in any order.
    Without conversation files the conversations are rebuilt from the evaluation files' rows."""
    logs = [p for p in paths if p.suffix.lower() == ".log"]
    loaded = [(path, read_json(path)) for path in paths if path not in logs]
    for path, data in loaded:
        if not isinstance(data, (list, dict)):
            raise ConfigError(f"{path}: expected a conversation list, a titles list or an evaluation object")
    titles_files = [(p, d) for p, d in loaded if isinstance(d, list) and d and all(isinstance(x, str) for x in d)]
    conversation_files = [(p, d) for p, d in loaded if isinstance(d, list) and (p, d) not in titles_files]
    evaluation_files = [(p, data) for p, data in loaded if isinstance(data, dict)]
    if len(titles_files) > 1:
        raise ConfigError("ragdive-reference: give at most one titles file (a JSON list of document titles)")
    run = ImportedRun(conversations=[])
    by_file: dict[str, list[Conversation]] = {}
    if conversation_files:
        for path, data in conversation_files:
            conversations = _conversations(path, data, first_index=len(run.conversations))
            if path.name in by_file:
                raise ConfigError(f"{path}: two conversation files are named {path.name}")
            by_file[path.name] = conversations
            run.conversations += conversations
            run.roles[path.name] = "conversations"
    elif evaluation_files:
        titles = titles_files[0][1] if titles_files else None
        by_file = rebuild_conversations(evaluation_files, titles, run)
        if titles_files:
            run.roles[titles_files[0][0].name] = "document titles, by position"
    else:
        raise ConfigError(
            "ragdive-reference: give conversation files (JSON lists of conversations) or evaluation files"
        )
    unknown_types = sum(t.question_type == QuestionType.UNKNOWN for c in run.conversations for t in c.turns)
    if unknown_types:
        run.notes.append(f"{unknown_types} turn(s) had no question type ragdive knows: stored as 'unknown'")
    unknown_truth = sum(not t.ground_truth for c in run.conversations for t in c.turns)
    if unknown_truth:
        run.notes.append(
            f"{unknown_truth} turn(s) have no ground truth in the source: stored empty (unknown), and a metric "
            "that needs one leaves them unscored"
        )
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
    if logs:
        _read_logs(logs, run)
    else:
        run.notes.append(
            "validator drafts and rejections are not in these files: turns have no attempts, rejections are unknown"
        )
    return run


def _read_logs(logs: list[Path], run: ImportedRun) -> None:
    ambiguous = 0
    for path in logs:
        rejections, doubtful = log_rejections(path, parse_log(path), run.conversations)
        run.rejections += rejections
        ambiguous += doubtful
        run.roles[path.name] = "validator rejections"
    placed = sum(r.turn_index is not None for r in run.rejections)
    other = sum(FailedCheck.OTHER in r.categories for r in run.rejections)
    run.notes.append(
        f"{len(run.rejections)} validator rejection(s) from the logs: {placed} placed on a turn by their text, the "
        "others' turn and every attempt number unknown (the logs do not say)"
    )
    if other:
        run.notes.append(f"{other} rejection(s) name a class ragdive has no category for: stored as 'other'")
    if ambiguous:
        run.invented.append(
            f"{ambiguous} rejection(s) name a title several conversations share: attributed to the first of them"
        )


def rebuild_conversations(
    evaluation_files: list[tuple[Path, Any]], titles: list[str] | None, run: ImportedRun
) -> dict[str, list[Conversation]]:
    """Conversations rebuilt from evaluation files alone, per conversation file they judged: the user message and
    the answer from the multi-turn rows, the stand-alone question from the single-turn rows, the document title
    from ``titles`` by position. The ground truth, question types and contexts are not in these files: unknown."""
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for path, data in evaluation_files:
        rows = data.get("detailed_results")
        if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
            raise ConfigError(f"{path}: expected a non-empty 'detailed_results' list of objects")
        judged = Path(str(data.get("file_path") or path.name)).name
        kind = "multi" if any(k in rows[0] for k in MULTI_TURN_METRICS) else "single"
        groups.setdefault(judged, {})[kind] = rows
    by_file: dict[str, list[Conversation]] = {}
    for judged, kinds in groups.items():
        single, multi = kinds.get("single"), kinds.get("multi")
        n_turns = len(single) if single is not None else len(multi or []) // 2
        if single is not None and multi is not None and len(multi) != 2 * len(single):
            raise ConfigError(f"{judged}: {len(multi)} multi-turn rows for {len(single)} single-turn rows")
        per = _turns_per_conversation(judged, n_turns, single, multi)
        conversations = []
        for c in range(n_turns // per):
            index = len(run.conversations) + c
            title = titles[c] if titles is not None and c < len(titles) else ""
            if titles is not None and c >= len(titles):
                raise ConfigError(f"{judged}: conversation {c + 1} has no title: the titles file has {len(titles)}")
            turns = [_rebuilt_turn(k, c * per + k, single, multi) for k in range(per)]
            conversations.append(
                Conversation(
                    id=f"c{index:05d}", index=index, persona="unknown", document_ids=[title] if title else [],
                    seed=index, turns=turns, status="finished",
                )
            )  # fmt: skip
        by_file[judged] = conversations
        run.conversations += conversations
    run.invented.append(
        "conversations rebuilt from the evaluation files (no conversation file): split into conversations of the "
        "number of turns the file names say (turns_N), checked against turn 1's message being its stand-alone question"
    )
    run.notes.append(
        "rebuilt conversations: ground truth, question types, personas and retrieved contexts are unknown"
        + ("" if titles else "; no titles file, so the seed documents are unknown")
    )
    return by_file


def _turns_per_conversation(
    judged: str, n_turns: int, single: list[dict[str, Any]] | None, multi: list[dict[str, Any]] | None
) -> int:
    """The reference names its files ..._turns_<N>_...; where both row kinds are given, every conversation's first
    message must be its stand-alone question (the paper's turn 1), which checks the split."""
    named = re.search(r"turns_(\d+)", judged)
    if named is None or int(named.group(1)) < 1:
        raise ConfigError(f"{judged}: the file name does not say the turns per conversation (turns_N)")
    per = int(named.group(1))
    if n_turns % per:
        raise ConfigError(f"{judged}: {n_turns} turns do not split into conversations of {per}")
    if single is not None and multi is not None:
        for start in range(0, n_turns, per):
            first, message = str(single[start].get("content", "")), str(multi[2 * start].get("content", ""))
            if " ".join(first.split()) != " ".join(message.split()):
                raise ConfigError(
                    f"{judged}: turn {start + 1} should open a conversation of {per} turns, but its message is not "
                    "its stand-alone question (are the files of one run?)"
                )
    return per


def _rebuilt_turn(k: int, at: int, single: list[dict[str, Any]] | None, multi: list[dict[str, Any]] | None) -> Turn:
    question = str(single[at].get("content", "")) if single is not None else None
    message = str(multi[2 * at].get("content", "")) if multi is not None else None
    answer = str(multi[2 * at + 1].get("content", "")) if multi is not None else None
    return Turn(
        index=k,
        rag_input=message if message is not None else str(question),
        standalone_question=question if question is not None else str(message),
        ground_truth="",  # unknown: the evaluation files do not carry it
        question_type=QuestionType.UNKNOWN,
        answer=answer,
        error=None if answer is not None else "the source has no answer for this turn (no multi-turn file)",
    )


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
        ground_truth=text(raw.get("answer"), f"{where}: answer", required=False),  # missing: unknown (empty)
        question_type=question_type(raw.get("type")) or QuestionType.UNKNOWN,
        answer=text(answer, f"{where}: rag_answer") if answer is not None else None,
        error=None if answer is not None else "the source has no answer for this turn",
        contexts=[_context(c, f"{where}, context {k + 1}") for k, c in enumerate(contexts)],
        # the source kept no validator loop and no probe flag: unknown, never False
        unanswerable=None,
        validator_overruled=None,
    )


def _context(raw: Any, where: str) -> Context:
    if isinstance(raw, str):  # the industrial study's files: a context is its text alone
        return Context(text=raw)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object or a string")
    metadata = raw.get("metadata")
    kept = {k: v for k, v in metadata.items() if isinstance(v, (str, int, float))} if isinstance(metadata, dict) else {}
    source = kept.get("url") or kept.get("title") or kept.get("source")
    return Context(
        text=text(raw.get("page_content"), f"{where}: page_content"),
        id=None if raw.get("id") is None else str(raw["id"]),
        source=None if source is None else str(source),
        metadata=kept,
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
