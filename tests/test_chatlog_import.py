"""`ragdive import chatlog`: made-up logged conversations become an imported run; the metrics that need no ground
truth score it, the ground-truth ones are unscored with the reason; --rewrite gives stand-alone questions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragdive.cli.main import main
from ragdive.evaluation.metrics.base import NO_GROUND_TRUTH
from ragdive.models import Message
from ragdive.store import RunStore

KETTLE = "The Lumen kettle switches off by itself after boiling."
CAPACITY = "The Lumen kettle holds 1.7 litres."
LOG = [
    {
        "id": "chat-1",
        "messages": [
            {"role": "system", "content": "You are the Lumen help desk."},
            {"role": "user", "content": "Does the Lumen kettle switch off by itself?"},
            {"role": "assistant", "content": KETTLE, "contexts": [KETTLE]},
            {"role": "user", "content": "And how much does it hold?"},
            {"role": "assistant", "content": f"{CAPACITY} [1]", "contexts": [{"text": CAPACITY, "id": "cap"}]},
        ],
        "metadata": {"persona": "customer", "channel": "web"},
    },
    {
        "messages": [
            {"role": "user", "content": "Can I put the kettle in the dishwasher?", "unanswerable": True},
            {"role": "assistant", "content": "That is not in the knowledge base.", "contexts": []},
        ]
    },
]
METRICS = "faithfulness,faithfulness_in_conversation,refused,over_refusal,correctness,context_recall,citation_precision"


def rewriter(messages: list[Message]) -> dict[str, Any]:
    message = messages[-1].content.split("USER'S NEXT MESSAGE:\n")[1].strip()
    standalone = message.replace("And how much does it hold?", "How much does the Lumen kettle hold?")
    return {"reason": "replaced 'it'", "standalone_question": standalone}


def write_log(tmp_path: Path) -> Path:
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in LOG))
    return path


def config(tmp_path: Path) -> Path:
    path = tmp_path / "models.yaml"
    offline = "ragdive.testing.offline"
    models = {
        "user": {"model": "scripted/rewriter", "options": {"responder": "tests.test_chatlog_import:rewriter"}},
        "judge": {"model": "scripted/judge", "options": {"responder": f"{offline}:judge"}},
    }
    path.write_text(yaml.safe_dump({"models": models, "cache": {"enabled": False}}))
    return path


def test_a_chat_log_imports_rewrites_and_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log, cfg, out = write_log(tmp_path), config(tmp_path), tmp_path / "imported"
    assert main(["import", "chatlog", str(log), "-o", str(out), "--rewrite", "--config", str(cfg)]) == 0
    shown = capsys.readouterr().out
    assert "imported 2 conversations, 3 turns" in shown and "1 system message(s) skipped" in shown
    store = RunStore.open(out)
    manifest = store.read_manifest()
    assert manifest.kind == "imported" and manifest.provenance and manifest.provenance.source_format == "chatlog"
    assert any("rewritten by the user model scripted/rewriter (1 rewritten" in i for i in manifest.provenance.invented)
    first, second = store.current_conversations()
    assert first.id == "chat-1" and first.persona == "customer" and second.id == "l00001"
    assert first.turns[1].rag_input == "And how much does it hold?"  # the message as sent stays as sent
    assert first.turns[1].standalone_question == "How much does the Lumen kettle hold?"
    assert first.turns[1].contexts[0].id == "cap" and first.turns[0].ground_truth == ""

    assert main(["evaluate", str(out), "--config", str(cfg), "--metrics", METRICS]) == 0
    scores = store.current_scores()
    by = {(s.conversation_id, s.turn_index, s.metric): s for s in scores}
    for metric in ("correctness", "context_recall"):  # need a ground truth: unscored with the reason
        assert all(
            s.unscored_reason == NO_GROUND_TRUTH for s in scores if s.metric == metric and s.conversation_id == "chat-1"
        )
        assert by["l00001", 0, metric].value is None  # a probe: unscored as the paper's probes are
    assert by["chat-1", 0, "faithfulness"].value == 1.0
    assert by["chat-1", 0, "faithfulness_in_conversation"].value == 1.0
    assert by["l00001", 0, "refused"].value == 1.0 and by["chat-1", 0, "refused"].value == 0.0
    # which turns are probes: known where every user message says so, unknown (unscored) elsewhere
    assert by["l00001", 0, "over_refusal"].value is None and "counts the answerable turns" in (
        by["l00001", 0, "over_refusal"].unscored_reason or ""
    )
    assert "unknown whether the knowledge base answers" in (by["chat-1", 0, "over_refusal"].unscored_reason or "")
    assert by["chat-1", 1, "citation_precision"].value == 1.0  # "[1]" -> the returned capacity passage
    assert by["chat-1", 0, "citation_precision"].value is None  # no marker, no field: unscored
    assert by["l00001", 0, "faithfulness"].value is None  # no context and no claim


def test_a_broken_log_is_one_readable_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "assistant", "content": "hi"}]}) + "\n")
    assert main(["import", "chatlog", str(path), "-o", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err
    assert "bad.jsonl: line 1: messages[0]: an assistant message that answers no user message" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()
