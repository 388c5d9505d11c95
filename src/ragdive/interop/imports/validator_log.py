"""The RAG-DIVE reference implementation's validator logs (``.log``), read as rejections.

Each log is blocks, one per rejected draft, each starting at its title line (blank lines between blocks, and in
the classified copy before the Class line too)::

    Validation failed for title: <document title>
    Initial Answer: {'rag_input': ..., 'question': ..., 'answer': ..., 'type': ...}   (a Python dict literal)
    Reason: <free text>
    Class: <category>                                                                 (human-classified copies only)

Categories are mapped case-insensitively onto ragdive's (``GroundTruth`` and ``Groundtruth`` alike); a class none
of them is, such as ``formatIssues``, is kept as ``other`` with its name in ``source_categories``. A block without a
class has no category (the raw logs). The log says neither the turn nor the attempt: a rejection is placed on a
turn only when its draft's message or stand-alone question is that turn's text in the conversation of its title,
and its attempt stays unknown.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...records import Conversation, FailedCheck, QuestionType, Rejection, TurnDraft
from .base import question_type

CATEGORIES = {
    "groundtruth": FailedCheck.GROUND_TRUTH_UNSUPPORTED,
    "documentmentioned": FailedCheck.DOCUMENT_MENTIONED,
    "notstandalone": FailedCheck.NOT_STANDALONE,
    "raginputnotconnected": FailedCheck.RAG_INPUT_NOT_CONNECTED,
    "questionnotconsistent": FailedCheck.QUESTION_INCONSISTENT,
    "type": FailedCheck.WRONG_TYPE,
}
"""The reference's classes (letters only, lower case) → ragdive's categories."""

_FIELDS = {
    "Validation failed for title:": "title",
    "Initial Answer:": "draft",
    "Reason:": "reason",
    "Class:": "category",
}


@dataclass(frozen=True)
class LogEntry:
    title: str
    draft: dict[str, Any]
    reason: str
    category: str | None
    block: int
    """1-based position of the block in its file."""


def category_of(name: str | None) -> FailedCheck | None:
    """ragdive's category for a class name (None: no class given); an unknown class is OTHER."""
    if name is None or not name.strip():
        return None
    return CATEGORIES.get(re.sub(r"[^a-z]", "", name.lower()), FailedCheck.OTHER)


def parse_log(path: Path) -> list[LogEntry]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    # a block starts at its title line: the classified copy puts a blank line before its Class line too
    lines = text.replace("\r\n", "\n").split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("Validation failed for title:")]
    if lines and any(line.strip() for line in lines[: starts[0] if starts else len(lines)]):
        raise ConfigError(f"{path}: does not start with a 'Validation failed for title:' line (not a validator log)")
    blocks = ["\n".join(lines[a:b]).strip() for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]
    return [_entry(path, n, block) for n, block in enumerate(blocks, 1)]


def _entry(path: Path, n: int, block: str) -> LogEntry:
    fields: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        prefix = next((p for p in _FIELDS if line.startswith(p)), None)
        if prefix is not None:
            current = _FIELDS[prefix]
            fields[current] = line[len(prefix) :].strip()
        elif not line.strip():
            continue  # blank lines between a block's fields
        elif current is not None:  # a field's text that went on over more lines
            fields[current] += "\n" + line
        else:
            raise ConfigError(f"{path}: block {n} does not start with 'Validation failed for title:'")
    missing = [name for name in ("title", "draft", "reason") if name not in fields]
    if missing:
        raise ConfigError(f"{path}: block {n} has no {', '.join(missing)} line")
    try:
        draft = ast.literal_eval(fields["draft"])  # a Python dict literal: read as data, never run
    except (ValueError, SyntaxError) as exc:
        raise ConfigError(f"{path}: block {n}: Initial Answer is not a readable dict ({exc})") from exc
    if not isinstance(draft, dict):
        raise ConfigError(f"{path}: block {n}: Initial Answer is not a dict")
    return LogEntry(fields["title"], draft, fields["reason"].strip(), fields.get("category"), n)


def log_rejections(
    path: Path, entries: list[LogEntry], conversations: list[Conversation]
) -> tuple[list[Rejection], int]:
    """The rejections of one log, each in the conversation of its title, and how many had to be attributed to the
    first of several conversations with that title. A title no conversation has is a ConfigError: the log and the
    conversations do not belong together."""
    by_title: dict[str, list[Conversation]] = {}
    for c in conversations:
        for title in c.document_ids[:1]:
            by_title.setdefault(title.strip(), []).append(c)
    out, ambiguous = [], 0
    for entry in entries:
        candidates = by_title.get(entry.title.strip())
        if not candidates:
            raise ConfigError(
                f"{path}: block {entry.block} names title {entry.title!r}, which no imported conversation has "
                "(give the conversation or titles file this log belongs to)"
            )
        ambiguous += len(candidates) > 1
        conversation = candidates[0]
        category = category_of(entry.category)
        draft = _draft(entry.draft)
        out.append(
            Rejection(
                id=f"{conversation.id}/{path.stem}#{entry.block}",
                conversation_id=conversation.id,
                turn_index=_turn_of(draft, conversation),
                attempt=None,
                categories=[] if category is None else [category],
                source_categories=[] if entry.category is None else [entry.category.strip()],
                reason=entry.reason,
                checked_by="llm",
                draft=draft,
            )
        )
    return out, ambiguous


def _draft(raw: dict[str, Any]) -> TurnDraft:
    def field(name: str) -> str:
        value = raw.get(name)
        return value if isinstance(value, str) else ""

    return TurnDraft(
        rag_input=field("rag_input"),
        standalone_question=field("question"),
        ground_truth=field("answer"),
        question_type=question_type(raw.get("type")) or QuestionType.UNKNOWN,
    )


def _turn_of(draft: TurnDraft, conversation: Conversation) -> int | None:
    def norm(text: str) -> str:
        return " ".join(text.split()).casefold()

    wanted = {norm(draft.rag_input), norm(draft.standalone_question)} - {""}
    matches = [t.index for t in conversation.turns if {norm(t.rag_input), norm(t.standalone_question)} & wanted]
    return matches[0] if len(matches) == 1 else None
