"""The judge through the real openai backend over HTTP, against the project's fault-injecting stub on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragdive.cli.main import main
from ragdive.evaluation.metrics.multi_turn.context_retention import ContextRetentionVerdict
from ragdive.evaluation.metrics.multi_turn.forgetfulness import ForgetfulnessVerdict
from ragdive.evaluation.metrics.single_turn.context_precision import ContextPrecisionVerdict
from ragdive.evaluation.metrics.single_turn.context_recall import ContextRecallVerdict
from ragdive.evaluation.metrics.single_turn.correctness import CorrectnessVerdict
from ragdive.evaluation.metrics.single_turn.faithfulness import FaithfulnessVerdict
from ragdive.models import Message
from ragdive.testing import Fault, StubServer

from .scripted_judge import rule_judge
from .test_evaluator import make_run

SCHEMAS = {
    s.__name__: s
    for s in (
        FaithfulnessVerdict,
        ContextPrecisionVerdict,
        ContextRecallVerdict,
        CorrectnessVerdict,
        ForgetfulnessVerdict,
        ContextRetentionVerdict,
    )
}


def reply(body: dict[str, Any]) -> str:
    """The rule judge behind HTTP: the schema comes from the request's response_format."""
    name = body["response_format"]["json_schema"]["name"]
    messages = [Message(role=m["role"], content=m["content"]) for m in body["messages"]]
    return json.dumps(rule_judge(messages, SCHEMAS[name]))


def test_evaluate_over_http_with_faults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = make_run(tmp_path / "runs", n=2, turns=2)
    with StubServer(reply=reply) as server:
        # a 500 is retried by the model layer; a 400 is not, so that one item ends unscored with the status
        server.plan(Fault.error(500), Fault.error(400, "bad request: context too long"))
        config = tmp_path / "exp.yaml"
        config.write_text(
            "models:\n  judge:\n    model: openai/stub-judge\n"
            f"    base_url: {server.base_url}\n    api_key: test-key\n    backoff_s: 0.01\n"
            "evaluation:\n  concurrency: 1\ncache:\n  enabled: false\n",
            encoding="utf-8",
        )
        # the 400 leaves one item unscored because the judge failed: the run is incomplete (exit 4), not finished
        assert main(["evaluate", str(store.path), "--config", str(config)]) == 4
        requests = server.request_count
    out = capsys.readouterr().out
    scores = store.scores().records
    assert len(scores) == 2 * 2 * 4 + 2 * 2
    unscored = [s for s in scores if not s.scored]
    assert len(unscored) == 1 and "400" in unscored[0].unscored_reason
    assert unscored[0].details == {"judge_failed": True}
    assert requests == len(scores) + 1  # every item once, plus the retried 500
    precision = [s.value for s in scores if s.metric == "context_precision" and s.scored]
    assert precision and set(precision) == {0.5}  # the relevant context sits at rank 2 of 2
    manifest = store.read_manifest()
    assert manifest.totals.unscored == 1 and manifest.totals.prompt_tokens > 0
    assert "(1 unscored)" in out
    assert "1 of 20 items unscored because the judge failed" in out and "--retry-failed" in out
    assert manifest.status == "incomplete"
