"""A scripted python target over a static dataset: answers even rows right and odd rows with "unknown"."""

from __future__ import annotations

import csv
from typing import Any


def make(dataset: str) -> Any:
    with open(dataset, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    by_question = {r["question"].strip(): (i, r) for i, r in enumerate(rows)}

    def answer(message: str) -> dict[str, Any]:
        i, row = by_question[message.strip()]
        if i == 3:
            raise RuntimeError("scripted outage")
        return {
            "answer": row["answer"] if i % 2 == 0 else "unknown",
            "contexts": [{"text": "an unrelated passage"}, {"text": row["context"], "source": row["title"]}],
        }

    return answer
