"""A plain chat log as an imported run, so the metrics that need no ground truth can score real conversations.

JSONL, one conversation per line::

    {"id": "chat-42",                                   # optional; else l00000, l00001... in file order
     "messages": [{"role": "user", "content": "..."},
                  {"role": "assistant", "content": "...",
                   "contexts": ["passage", {"text": "...", "id": "...", "source": "...", "score": 0.7}],
                   "citations": [2, {"id": "...", "sentence": "..."}]},   # both optional
                  ...],
     "metadata": {"persona": "...", "document_ids": ["..."], ...}}        # optional; kept on the conversation

Each user message and the assistant message after it make one turn; system messages are skipped (counted in a
note); a user message with no answer after it is a failed turn. There is no ground truth: ground-truth metrics
(correctness, context precision and recall) are unscored with that reason, never judged against an empty text.
Stand-alone questions are the messages as sent, unless rewritten by the user model (``--rewrite``). A user message
may say ``"unanswerable": true`` (or false) when it is known whether the knowledge base answers it; unless every
user message of a conversation says so, its refusal recall, precision and over-refusal are unscored (unknown),
while ``refused`` is still judged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...records import Citation, Context, Conversation, QuestionType, Turn
from .base import ImportedRun, read_jsonl, text

NAME = "chatlog"
VERSION = 1


def read_chatlog(paths: list[Path]) -> ImportedRun:
    conversations: list[Conversation] = []
    roles: dict[str, str] = {}
    skipped_system = 0
    ids: set[str] = set()
    for path in paths:
        roles[path.name] = "chat log (one conversation per line)"
        for line, row in enumerate(read_jsonl(path), 1):
            where = f"{path.name}: line {line}"
            conversation, system = _conversation(len(conversations), row, where)
            if conversation.id in ids:
                raise ConfigError(f"{where}: conversation id {conversation.id!r} appears twice")
            ids.add(conversation.id)
            conversations.append(conversation)
            skipped_system += system
    if not conversations:
        raise ConfigError(f"{NAME}: the files hold no conversations")
    run = ImportedRun(conversations, [], shape="conversations", roles=roles)
    run.invented += [
        "conversation seeds: the log has none; each is the conversation's position",
        "conversation start and finish times: the log has none; the time of the import",
        "stand-alone questions: the messages as sent (the log has none; `--rewrite` asks the user model)",
    ]
    run.notes.append("question types after the first turn are unknown: a log does not give them")
    run.notes.append("ground truths are unknown (empty): ground-truth metrics are unscored with that reason")
    if skipped_system:
        run.notes.append(f"{skipped_system} system message(s) skipped: they are not turns")
    unanswered = sum(t.answer is None for c in conversations for t in c.turns)
    if unanswered:
        run.notes.append(f"{unanswered} user message(s) have no answer after them: recorded as failed turns")
    return run


def _conversation(n: int, row: dict[str, Any], where: str) -> tuple[Conversation, int]:
    messages = row.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ConfigError(f"{where}: expected a non-empty 'messages' list")
    meta = row.get("metadata") or {}
    if not isinstance(meta, dict):
        raise ConfigError(f"{where}: metadata: expected an object")
    turns: list[Turn] = []
    marked: list[bool] = []
    system = 0
    for k, message in enumerate(messages):
        at = f"{where}: messages[{k}]"
        if not isinstance(message, dict):
            raise ConfigError(f"{at}: expected an object with role and content")
        role = message.get("role")
        content = text(message.get("content"), f"{at}: content")
        if role == "system":
            system += 1
        elif role == "user":
            probe = message.get("unanswerable")
            if probe is not None and not isinstance(probe, bool):
                raise ConfigError(f"{at}: unanswerable: expected true or false")
            marked.append(probe is not None)
            turns.append(
                Turn(
                    index=len(turns),
                    rag_input=content,
                    standalone_question=content,
                    ground_truth="",
                    question_type=QuestionType.INITIAL if not turns else QuestionType.UNKNOWN,
                    error="the log has no answer to this message",
                    unanswerable=bool(probe),
                )
            )
        elif role == "assistant":
            if not turns or turns[-1].answer is not None:
                raise ConfigError(f"{at}: an assistant message that answers no user message")
            contexts = _contexts(message.get("contexts"), at)
            turns[-1].answer, turns[-1].error, turns[-1].contexts = content, None, contexts
            turns[-1].citations = _citations(message.get("citations"), contexts, at)
        else:
            raise ConfigError(f"{at}: role {role!r}; expected user, assistant or system")
    if not turns:
        raise ConfigError(f"{where}: no user message")
    ident = row.get("id")
    docs = meta.get("document_ids")
    conversation = Conversation(
        id=str(ident) if ident not in (None, "") else f"l{n:05d}",
        index=n,
        persona=str(meta.get("persona") or "unknown"),
        document_ids=[str(d) for d in docs] if isinstance(docs, list) else [],
        seed=n,
        turns=turns,
    )
    extra: dict[str, Any] = {"metadata": meta} if meta else {}  # records keep extra fields
    if not all(marked):  # which turns the knowledge base cannot answer is unknown: no refusal figure counts them
        extra["answerability"] = "unknown"
    if extra:
        conversation = Conversation.model_validate({**conversation.model_dump(), **extra})
    return conversation, system


def _contexts(raw: Any, where: str) -> list[Context]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: contexts: expected a list")
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            out.append(Context(text=item))
        elif isinstance(item, dict) and isinstance(item.get("text", item.get("content")), str):
            score = item.get("score")
            out.append(
                Context(
                    text=str(item.get("text", item.get("content"))),
                    id=None if item.get("id") is None else str(item["id"]),
                    source=None if item.get("source") is None else str(item["source"]),
                    score=float(score) if isinstance(score, int | float) else None,
                )
            )
        else:
            raise ConfigError(f"{where}: contexts[{i}]: expected a text or an object with text")
    return out


def _citations(raw: Any, contexts: list[Context], where: str) -> list[Citation] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: citations: expected a list")
    ranks = {c.id: i for i, c in enumerate(contexts, 1) if c.id is not None}
    out = []
    for i, item in enumerate(raw):
        rank = item if isinstance(item, int) and not isinstance(item, bool) else None
        sentence = None
        if isinstance(item, dict):
            rank = item.get("context", item.get("rank"))
            if rank is None and item.get("id") is not None:
                rank = ranks.get(str(item["id"]))
            sentence = item.get("sentence") if isinstance(item.get("sentence"), str) else None
        if not isinstance(rank, int) or isinstance(rank, bool):
            raise ConfigError(f"{where}: citations[{i}]: expected a context rank or the id of a returned context")
        out.append(Citation(context=rank, sentence=sentence))
    return out
