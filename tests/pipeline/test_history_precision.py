"""The paper's Table 4 effect in the reference RAG: follow-ups that need the history ("when was it enlarged?")
retrieve worse without it. A scripted user asks, per seed document, a named first question and a pronoun
follow-up; each follow-up's key word is repeated in another document, so a retriever that sees the follow-up alone
finds the wrong one. The judge marks a context relevant when it holds the ground truth (deterministic), so context
precision is computed from which passages were retrieved. Shown both ways: two simulated runs (history full and
none) and a frozen-user replay of the first under history none."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import ragdive
from ragdive.models import Message
from ragdive.store import RunStore

CORPUS = {
    "harbour": "The old harbour of Veldmark was built in 1632 by Dutch engineers. It was enlarged in 1788 after a "
    "storm. Its lighthouse was restored, restored again, and is still restored every decade.",
    "bridge": "The stone bridge of Aas was built in 1701 by masons from Lund. It was restored in 1999 with stone "
    "from the original quarry. Its railings were designed, redesigned and designed again over the years.",
    "tower": "The clock tower of Morrow was built in 1850. It was designed by Ada Lind. The market square below it "
    "was enlarged, enlarged and enlarged again as the town grew.",
}
# per seed document: (question, ground truth) for turn 1, then (follow-up, stand-alone question, ground truth)
PLANS = {
    "harbour": (
        ("Who built the old harbour of Veldmark?", "Dutch engineers"),
        ("When was it enlarged?", "When was the old harbour of Veldmark enlarged?", "1788"),
    ),
    "bridge": (
        ("Who built the stone bridge of Aas?", "masons from Lund"),
        ("When was it restored?", "When was the stone bridge of Aas restored?", "1999"),
    ),
    "tower": (
        ("When was the clock tower of Morrow built?", "1850"),
        ("Who designed it?", "Who designed the clock tower of Morrow?", "Ada Lind"),
    ),
}
_DOC = re.compile(r'<document id="([^"]*)"')
_TURN = re.compile(r"Write turn (\d+)")


def evidence(doc: str, truth: str) -> str:
    return next(s.strip() + "." for s in CORPUS[doc].split(".") if truth in s)


def pronoun_user(messages: list[Message]) -> dict[str, Any]:
    """The simulated user: turn 1 names its subject; turn 2 refers to it with a pronoun."""
    text = "\n".join(m.content for m in messages)
    doc = _DOC.search(text).group(1)  # type: ignore[union-attr]
    turn = int(_TURN.search(text).group(1))  # type: ignore[union-attr]
    (question, truth), (follow_up, standalone, later_truth) = PLANS[doc]
    if turn == 1:
        return {
            "question_type": "initial",
            "rag_input": question,
            "standalone_question": question,
            "ground_truth": truth,
            "evidence": [evidence(doc, truth)],
        }
    return {
        "question_type": "follow-up",
        "rag_input": follow_up,
        "standalone_question": standalone,
        "ground_truth": later_truth,
        "evidence": [evidence(doc, later_truth)],
        "refers_to_turn": 1,
    }


def experiment(tmp_path: Path, history: str) -> dict[str, Any]:
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    for name, text in CORPUS.items():
        (corpus / f"{name}.md").write_text(text + "\n")

    def scripted(role: str, responder: str) -> dict[str, Any]:
        return {"model": f"scripted/{role}", "options": {"responder": responder}}

    return {
        "name": f"history-{history}",
        "seed": 3,
        "output_dir": str(tmp_path / "runs"),
        "cache": {"dir": str(tmp_path / "cache")},
        "corpus": {"path": str(corpus)},
        "models": {
            "user": scripted("user", f"{__name__}:pronoun_user"),
            "validator": scripted("validator", "tests.pipeline.helpers:accept"),
            "judge": scripted("judge", "tests.pipeline.helpers:judge"),
            "target": scripted("target", "ragdive.targets.reference.doubles:first_passage"),
        },
        "simulation": {"conversations": 6, "max_turns": 2, "concurrency": 1},
        # one chunk per document and one context per answer: precision is 1 for the right passage, else 0
        "target": {"type": "reference", "top_k": 1, "history": history, "index_dir": str(tmp_path / "index")},
        "evaluation": {"metrics": ["context_precision"], "concurrency": 1},
    }


def follow_up_precision(run_dir: Path) -> list[float]:
    store = RunStore.open(run_dir)
    return [s.value for s in store.current_scores() if s.metric == "context_precision" and s.turn_index == 1]  # type: ignore[misc]


def test_context_precision_drops_without_history(tmp_path: Path) -> None:
    full = ragdive.run(experiment(tmp_path, "full"))
    none = ragdive.run(experiment(tmp_path, "none"))
    assert full.status == none.status == "finished"
    # first turns name their subject: the history policy cannot matter there
    assert full.metrics["context_precision"].n_scored == none.metrics["context_precision"].n_scored == 12
    with_history, without = follow_up_precision(full.run_dir), follow_up_precision(none.run_dir)
    assert len(with_history) == len(without) == 6
    assert with_history == [1.0] * 6 and without == [0.0] * 6
    assert none.metrics["context_precision"].mean < full.metrics["context_precision"].mean  # type: ignore[operator]

    target = tmp_path / "none.yaml"
    target.write_text(f"type: reference\ntop_k: 1\nhistory: none\nindex_dir: {tmp_path / 'index'}\n")
    replayed = ragdive.replay(full.run_dir, target, output=tmp_path / "replays")
    assert follow_up_precision(replayed.run_dir) == without  # the same questions, the same retrieval as `none`
    (comparison,) = ragdive.compare(full.run_dir, replayed.run_dir, metrics=["context_precision"])
    (row,) = comparison.metrics
    assert row.paired_on == "turn" and row.paired.n_pairs == 12 and row.arrow == "↓" and row.better is False
