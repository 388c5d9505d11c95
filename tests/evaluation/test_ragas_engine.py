"""The optional ragas engine against a real OpenAI-compatible stub on loopback (skipped without ragas)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.errors import ConfigError
from ragdive.evaluation.ragas_adapter import import_ragas
from ragdive.records import Context
from ragdive.store import RunStore
from ragdive.testing import StubServer
from ragdive.testing.schema_replies import SchemaReplies
from tests.factories import make_conversation


def test_missing_ragas_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ragas", None)
    monkeypatch.setitem(sys.modules, "ragas.llms", None)
    with pytest.raises(ConfigError, match=r"pip install 'ragdive\[ragas\]'"):
        import_ragas()


def run_with_contexts(root: Path, k: int) -> RunStore:
    store = RunStore.create(root)
    conv = make_conversation(turns=2)
    for i, t in enumerate(conv.turns):
        conv.turns[i] = t.model_copy(update={"contexts": [Context(text=f"passage {j}") for j in range(k)]})
    store.append_conversation(conv)
    return store


def test_ragas_engine_scores_through_ragas_and_counts_its_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ragas", reason="ragas extra not installed")
    try:
        import_ragas()
    except ConfigError as exc:
        pytest.skip(str(exc))
    store = run_with_contexts(tmp_path / "runs", k=3)
    replies = SchemaReplies()
    with StubServer(reply=replies) as stub:
        config = tmp_path / "exp.yaml"
        config.write_text(
            f"models:\n  judge:\n    model: openai/stub\n    base_url: {stub.base_url}\n"
            "evaluation:\n  engine: ragas\n  metrics: [faithfulness, context_precision, context_recall, correctness, "
            "forgetfulness]\n",
            encoding="utf-8",
        )
        assert main(["evaluate", str(store.path), "--config", str(config)]) == 0
        chat_calls = replies.counts["chat"]
    out = capsys.readouterr().out
    scores = store.scores().records
    assert {s.metric for s in scores} == {
        f"ragas_{m}" for m in ("faithfulness", "context_precision", "context_recall", "correctness")
    }
    assert all(s.scored and s.details == {"engine": "ragas"} for s in scores)
    # per turn: faithfulness 2 + precision k=3 + recall 1 + correctness 3 = 9; two turns
    assert chat_calls == 18
    assert "18 judge calls" in out and "forgetfulness not computed" in out
    summary = next(line for line in out.splitlines() if line.strip().startswith("ragas_context_recall"))
    assert summary.split()[1] == "1.000"  # the summary shows the ragas_ metrics that were written


def test_ragas_engine_needs_an_openai_compatible_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = run_with_contexts(tmp_path / "runs", k=1)
    config = tmp_path / "exp.yaml"
    config.write_text("models:\n  judge: scripted/x\nevaluation:\n  engine: ragas\n", encoding="utf-8")
    assert main(["evaluate", str(store.path), "--config", str(config)]) == 2
    assert "needs an OpenAI-compatible judge" in capsys.readouterr().err
