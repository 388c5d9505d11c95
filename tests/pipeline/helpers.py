"""A complete experiment for `ragdive run` tests: a tiny corpus on disk, a python target, and scripted models named
in the YAML (`options: {responder: "module:function"}`), so a subprocess needs no registration either."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ragdive.models import Message
from tests.evaluation.scripted_judge import rule_judge
from tests.simulation.helpers import DOCS


def accept(messages: list[Message]) -> dict[str, Any]:
    return {"reason": "fine", "failed_checks": [], "valid": True}


async def judge(messages: list[Message], schema: type[BaseModel] | None) -> Any:
    """The rule judge of the evaluation tests; slow when PIPETEST_SLOW_JUDGE is set (to interrupt it). The wait
    is awaited, like a real model call: a blocking one would let every queued call finish in one loop step."""
    slow = os.environ.get("PIPETEST_SLOW_JUDGE")
    if slow:
        await asyncio.sleep(0.15 if slow == "1" else float(slow))  # "1": 0.15 s; else seconds per call
    return rule_judge(messages, schema)


def answer(message: str) -> dict[str, Any]:
    """The system under test: always the harbour document's first sentence, with the document as context."""
    return {"answer": DOCS[0].text.split(". ")[0] + ".", "contexts": [{"text": DOCS[0].text, "source": "harbour"}]}


def scripted(role: str, responder: str) -> str:
    return f"{{model: scripted/{role}, options: {{responder: '{responder}'}}}}"


def write_experiment(tmp_path: Path, *, extra: str = "", judge_model: str | None = None, **simulation: Any) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    for doc in DOCS:
        (corpus / f"{doc.id}.md").write_text(doc.text + "\n")  # no heading: sentence 1 is the text's
    sim = {"conversations": 2, "max_turns": 2, "personas": ["precise", "skeptical"], "concurrency": 1, **simulation}
    judge_line = judge_model if judge_model is not None else scripted("judge", "tests.pipeline.helpers:judge")
    config = tmp_path / "experiment.yaml"
    config.write_text(
        "name: pipeline-test\nseed: 5\n"
        f"cache: {{dir: {tmp_path / 'cache'}}}\n"
        f"output_dir: {tmp_path / 'runs'}\n"
        "models:\n"
        f"  user: {scripted('user', 'tests.simulation.helpers:good_draft')}\n"
        f"  validator: {scripted('validator', 'tests.pipeline.helpers:accept')}\n"
        + (f"  judge: {judge_line}\n" if judge_line else "")
        + f"corpus: {{path: {corpus}}}\n"
        + f"simulation: {sim}\n".replace("'", "")
        + "target: {type: python, callable: 'tests.pipeline.helpers:answer'}\n"
        + "evaluation: {concurrency: 1}\n"
        + extra
    )
    return config


def down(message: str) -> dict[str, Any]:
    """A system under test that is down: every question fails."""
    raise ConnectionError("connection refused")


def validator_with_outage(messages: list[Message]) -> dict[str, Any]:
    """The accepting validator, down (an HTTP 500 the model layer gave up on) while RAGDIVE_TEST_OUTAGE is set."""
    if os.environ.get("RAGDIVE_TEST_OUTAGE"):
        from ragdive.errors import ModelError

        raise ModelError("HTTP 500: validator down (gave up after 5 attempts)", status=500, retryable=False)
    return accept(messages)
