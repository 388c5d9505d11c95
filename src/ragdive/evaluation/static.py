"""Static-dataset mode: ask each question of a Q&A dataset once, as a one-turn conversation, so a static run and
a dynamic run of the same target sit side by side in the same run format (manifest kind "static").

Accepts CSV or JSONL with `question` and `answer` columns. The document id comes from `title` (SQuAD-like
files), else `document_id`, `doc_id` or `id`, else the row number. Other tools' question sets are read as they
are: a Ragas `EvaluationDataset` JSONL (single-turn `user_input` and `reference`) and DeepEval test cases or
goldens as JSON (a list, or `{"test_cases": [...]}` / `{"goldens": [...]}`, of `input` and `expected_output`).
"""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..case_files import case_rows
from ..errors import ConfigError, TargetError
from ..json_lines import json_objects
from ..records import Conversation, QuestionType, Turn
from ..store import RunRecorder, RunStore
from ..targets import DialogueState, Target
from ..targets.watch import TargetWatch, save_as_finished

DOCUMENT_COLUMNS = ("title", "document_id", "doc_id", "id")
SET_COLUMNS = (("question", "answer"), ("user_input", "reference"), ("input", "expected_output"))
"""(question, answer) column names: ragdive's own, Ragas's single-turn sample, DeepEval's test case / golden."""


@dataclass
class StaticItem:
    question: str
    answer: str
    document_id: str


def _rows(path: Path) -> list[dict[str, object]]:
    try:
        if path.suffix.lower() == ".csv":
            with path.open(encoding="utf-8", newline="") as fh:
                return list(csv.DictReader(fh))
        if path.suffix.lower() == ".json":
            return case_rows(path)  # DeepEval's files, camelCase too: the reader `ragdive import` uses
        if path.suffix.lower() in (".jsonl", ".ndjson"):
            return [row for _, row in json_objects(path.read_text(encoding="utf-8"), path)]
    except FileNotFoundError as exc:
        raise ConfigError(f"dataset {path} does not exist") from exc
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ConfigError(f"cannot read dataset {path}: {exc}") from exc
    raise ConfigError(f"dataset {path}: expected a .csv or .jsonl file, or a .json list")


def load_static_dataset(path: Path | str, *, limit: int | None = None) -> list[StaticItem]:
    """Read the dataset; a missing column or an empty question/answer is a ConfigError naming the row."""
    path = Path(path)
    rows = _rows(path)
    if not rows:
        raise ConfigError(f"dataset {path} has no rows")
    columns = set(rows[0])
    names = next((pair for pair in SET_COLUMNS if set(pair) <= columns), None)
    if names is None:
        missing = [c for c in ("question", "answer") if c not in columns]
        raise ConfigError(
            f"dataset {path} lacks column(s) {', '.join(missing)} (or Ragas's user_input/reference, DeepEval's "
            f"input/expected_output); found: {', '.join(sorted(map(str, columns)))}"
        )
    if names[0] == "user_input" and isinstance(rows[0].get("user_input"), list):
        raise ConfigError(f"dataset {path}: multi-turn Ragas samples are conversations, not a question set")
    q_col, a_col = names
    doc_col = next((c for c in DOCUMENT_COLUMNS if c in columns), None)
    items = []
    for n, row in enumerate(rows[:limit] if limit else rows, 1):
        question, answer = str(row.get(q_col) or "").strip(), str(row.get(a_col) or "").strip()
        if not question or not answer:
            raise ConfigError(f"dataset {path}, row {n}: empty question or answer")
        doc = str(row.get(doc_col) or "").strip() if doc_col else ""
        items.append(StaticItem(question, answer, doc or f"row-{n}"))
    return items


def sample_per_document(
    items: list[StaticItem], documents: list[tuple[str, str]], per_document: int, *, seed: int
) -> list[StaticItem]:
    """Up to ``per_document`` questions about each seed document (the paper's Table 5: static questions about the
    documents the dynamic conversations were seeded with), drawn with ``seed``; a document matches an item whose
    document id is the document's id or its title. ``documents`` are (id, title) pairs in seed order; the items
    come out grouped by document in that order. No item about any seed document is a ConfigError."""
    by_document: dict[str, list[StaticItem]] = {}
    for item in items:
        by_document.setdefault(item.document_id, []).append(item)
    rng = np.random.default_rng(seed)
    chosen: list[StaticItem] = []
    for doc_id, title in documents:
        pool = by_document.get(doc_id) or by_document.get(title) or []
        if len(pool) > per_document:
            keep = sorted(rng.choice(len(pool), size=per_document, replace=False).tolist())
            pool = [pool[i] for i in keep]
        chosen.extend(pool)
    if not chosen:
        some = ", ".join(sorted(by_document)[:3])
        raise ConfigError(
            f"no question of the dataset is about a seed document ({len(documents)} seed documents; the dataset's "
            f"document ids look like: {some}); its title/document_id column must name the corpus documents"
        )
    return chosen


def static_conversation_id(index: int) -> str:
    return f"static-{index:05d}"


async def ask_one(target: Target, item: StaticItem, index: int, seed: int) -> Conversation:
    cid = static_conversation_id(index)
    state = DialogueState(id=cid)
    turn = Turn(
        index=0,
        rag_input=item.question,
        standalone_question=item.question,
        ground_truth=item.answer,
        question_type=QuestionType.INITIAL,
    )
    try:
        await target.start(state)
        reply = await target.respond(state, item.question)
        turn = turn.model_copy(
            update={
                "answer": reply.answer,
                "contexts": reply.contexts,
                "latency_s": reply.latency_s,
                "citations": reply.citations,
            }
        )
    except TargetError as exc:
        turn = turn.model_copy(update={"error": str(exc)})
    return Conversation(
        id=cid,
        index=index,
        persona="static",
        document_ids=[item.document_id],
        seed=seed,
        turns=[turn],
        status="error" if turn.error else "finished",
        error=turn.error,
    )


async def ask_dataset(
    target: Target,
    items: list[StaticItem],
    store: RunStore,
    *,
    seed: int = 0,
    concurrency: int = 4,
    on_conversation: Callable[[Conversation], None] | None = None,
) -> tuple[int, int]:
    """Ask every question not yet in the store; write each conversation as it finishes (and tell
    ``on_conversation``). Returns (asked, errors)."""
    done = store.finished_conversation_ids()
    slots = asyncio.Semaphore(concurrency)

    async def bounded(i: int, item: StaticItem) -> Conversation:
        async with slots:
            return await ask_one(target, item, i, seed)

    pending = [bounded(i, item) for i, item in enumerate(items) if static_conversation_id(i) not in done]
    tasks = [asyncio.ensure_future(p) for p in pending]
    watch = TargetWatch(len(tasks), saved="answers so far are saved")

    def save(conversation: Conversation) -> None:
        store.append_conversation(conversation)
        if on_conversation:
            on_conversation(conversation)

    try:
        return await save_as_finished(tasks, save, watch, lambda c: c.status == "error")
    finally:
        RunRecorder(store).record()
