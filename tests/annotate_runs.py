"""A scripted run with a corpus on disk, and helpers that fill annotation sheets the way a rater would."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragdive.records import Context, Conversation
from ragdive.store import RunStore
from tests.factories import make_conversation

RUN_ID = "20260101-000000-annot"
TYPES = ["initial", "follow-up", "clarification", "follow-up", "comparative"]


def corpus(root: Path, conversations: int) -> Path:
    folder = root / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    for c in range(conversations):
        body = " ".join(f"Before {i}. quote {i} of doc {c}. After {i}." for i in range(5))
        (folder / f"doc-{c}.md").write_text(f"# Doc {c}\n\n{body}\n", encoding="utf-8")
    return folder


def scripted_run(root: Path, conversations: int = 4, turns: int = 5, *, with_corpus: bool = True) -> RunStore:
    folder = corpus(root, conversations) if with_corpus else None
    config = {"corpus": {"path": str(folder)}} if folder else {}
    store = RunStore.create(root / "runs", run_id=RUN_ID, config=config)
    for c in range(conversations):
        store.append_conversation(conversation(c, turns))
    return store


def conversation(c: int, turns: int) -> Conversation:
    conv = make_conversation(f"conv-{c}", turns=turns, index=c)
    conv.document_ids = [f"doc-{c}"]
    for i, t in enumerate(conv.turns):
        conv.turns[i] = t.model_copy(
            update={
                "question_type": TYPES[i % len(TYPES)],
                "evidence": [f"quote {i} of doc {c}"],
                "contexts": [Context(text=f"passage {i}", source=f"doc-{c}")],
            }
        )
    return conv


Rating = Callable[[str, str], Any]
"""(item id, criterion) -> the cell's value."""


def fill_xlsx(path: Path, rate: Rating, *, rater: str | None = None) -> None:
    import openpyxl

    book = openpyxl.load_workbook(path)
    for name in ("turns", "dialogues"):
        sheet = book[name]
        header = [c.value for c in sheet[1]]
        for row in sheet.iter_rows(min_row=2):
            item = row[header.index("item_id")].value
            for col, name_ in enumerate(header):
                if name_ in CRITERION_NAMES:
                    row[col].value = rate(str(item), str(name_))
    if rater is not None:
        for row in book["about"].iter_rows():
            if row[0].value == "rater":
                row[1].value = rater
    book.save(path)


CRITERION_NAMES = {"correct", "answerable", "plausible", "answer_correct", "answer_faithful", "diverse", "coherent"}
