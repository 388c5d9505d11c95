"""Slow: the packaged embedded model (Gemma-3-270M base, weak) as the judge, end to end through the CLI.

It checks plumbing and the unscored policy with a real model, never answer quality: every item is either a
value in [0, 1] with the judge's reason or unscored with a reason, and the manifest counts agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.cli.main import main

from .test_evaluator import make_run

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow


def test_embedded_model_judges_a_small_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = make_run(tmp_path / "runs", n=1, turns=2)
    metrics = "faithfulness,context_precision,context_recall,correctness,forgetfulness,context_retention"
    code = main(["evaluate", str(store.path), "--model", "judge=llamacpp/default", "--metrics", metrics])
    out = capsys.readouterr().out
    assert code == 0, out
    scores = store.scores().records
    assert len(scores) == 2 * 4 + 2
    for s in scores:
        assert (s.value is not None and 0.0 <= s.value <= 1.0) or (s.value is None and s.unscored_reason)
        assert s.judge_model == "llamacpp/default"
    manifest = store.read_manifest()
    assert manifest.totals.scores == 10 and manifest.totals.unscored == sum(not s.scored for s in scores)
    assert manifest.totals.prompt_tokens > 0
    assert "per-metric summary" in out
