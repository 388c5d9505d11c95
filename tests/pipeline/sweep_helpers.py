"""A sweep for tests: the offline doubles of ragdive.testing for user, validator and judge, the reference RAG
(bm25 over a tiny corpus, a scripted extractive generator) as the target, and a small static Q&A set. Named in
YAML as `module:function`, so a `ragdive sweep` subprocess needs no registration either."""

from __future__ import annotations

import asyncio
import csv
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ragdive.models import Message
from ragdive.testing import offline
from tests.simulation.helpers import DOCS

HISTORIES = ["full", "none", "first", "last:3"]


async def slow_judge(messages: list[Message], schema: type[BaseModel] | None) -> Any:
    """The offline judge; awaited slowly while SWEEPTEST_SLOW is set, so a kill lands in the middle of scoring."""
    if os.environ.get("SWEEPTEST_SLOW"):
        await asyncio.sleep(float(os.environ["SWEEPTEST_SLOW"]))
    return offline.judge(messages, schema)


def _model(role: str, responder: str) -> dict[str, Any]:
    return {"model": f"scripted/{role}", "options": {"responder": responder}}


def base_experiment(tmp_path: Path) -> dict[str, Any]:
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    for doc in DOCS:
        (corpus / f"{doc.id}.md").write_text(doc.text + "\n")
    return {
        "name": "sweep-test",
        "seed": 3,
        "cache": {"dir": str(tmp_path / "cache")},
        "models": {
            "user": _model("user", "ragdive.testing.offline:user"),
            "validator": _model("validator", "ragdive.testing.offline:validator"),
            "judge": _model("judge", "tests.pipeline.sweep_helpers:slow_judge"),
            "target": _model("target", "ragdive.targets.reference.doubles:first_passage"),
        },
        "corpus": {"path": str(corpus)},
        "simulation": {"conversations": 2, "max_turns": 2, "personas": ["precise"], "concurrency": 2},
        "target": {
            "type": "reference",
            "retriever": "bm25",
            "top_k": 2,
            "chunk_size": 24,
            "chunk_overlap": 4,
            "index_dir": str(tmp_path / "index"),
        },
        "evaluation": {"concurrency": 2},
    }


def write_static_set(tmp_path: Path) -> Path:
    path = tmp_path / "static.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "answer", "document_id"])
        for doc in DOCS:
            first = doc.text.split(". ")[0] + "."
            writer.writerow([f"What does the text say about {doc.title}?", first, doc.id])
    return path


def write_sweep(tmp_path: Path, *, repeats: int = 3, static: bool = True, **extra: Any) -> Path:
    import yaml

    write_static_set(tmp_path)
    sweep: dict[str, Any] = {
        "name": "histories",
        "base": base_experiment(tmp_path),
        "axes": {"target.history": HISTORIES},
        "repeats": repeats,
        **extra,
    }
    if static:
        sweep["static"] = {"dataset": "static.csv"}
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep, sort_keys=False))
    return path
