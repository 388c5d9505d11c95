"""Citation precision and recall: markers and a citations field mapped onto the contexts, the arithmetic by hand,
and the unscored cases (no citations at all, no claim)."""

from __future__ import annotations

import pytest

from ragdive.errors import TargetError
from ragdive.evaluation import Evaluator, Judge
from ragdive.evaluation.metrics.single_turn.citations import NO_CITATIONS, cited_sentences
from ragdive.records import Citation, Context, Conversation
from ragdive.targets.python_callable import coerce_reply
from tests.factories import make_conversation

from .scripted_judge import scripted_judge

BOTH = ["citation_precision", "citation_recall"]


def cited(answer: str, *, citations: list[Citation] | None = None, k: int = 3) -> Conversation:
    conv = make_conversation("c", turns=1)
    contexts = [Context(text=f"passage {i}", id=f"p{i}") for i in range(1, k + 1)]
    turn = conv.turns[0].model_copy(update={"answer": answer, "contexts": contexts, "citations": citations})
    return conv.model_copy(update={"turns": [turn]})


def test_markers_are_mapped_to_their_sentence() -> None:
    conv = cited("The kettle holds 1.7 litres [1]. It boils fast [2][3]. So, fine. [1, 3] Enjoy your tea!")
    got = [(s.text, s.cited) for s in cited_sentences(conv.turns[0])]
    assert got == [
        ("The kettle holds 1.7 litres.", [1]),
        ("It boils fast.", [2, 3]),
        ("So, fine.", [1, 3]),  # a marker after the full stop belongs to the sentence before it
        ("Enjoy your tea!", []),
    ]


async def test_precision_and_recall_by_hand_from_one_judge_call() -> None:
    conv = cited("The kettle holds 1.7 litres [1]. It boils in 3 minutes [2][3]. It is blue. Enjoy your tea!")
    model, backend = scripted_judge(responder=None)
    backend.enqueue(
        {
            "sentences": [
                {"sentence": 1, "reason": "p1 says so", "claim": True, "supported_by": [1]},
                {"sentence": 2, "reason": "p2 says so, p3 does not", "claim": True, "supported_by": [2, 1]},
                {"sentence": 3, "reason": "cites nothing", "claim": True, "supported_by": []},
                {"sentence": 4, "reason": "a pleasantry", "claim": False, "supported_by": []},
            ]
        }
    )
    scores = {s.metric: s for s in await Evaluator(Judge(model), BOTH).score_conversations([conv])}
    assert len(backend.calls) == 1  # shared by the two metrics
    assert "(2) It boils in 3 minutes [2][3]. -- cites: 2, 3" in backend.calls[0].text
    # pairs: s1->1 ok, s2->2 ok, s2->3 not (a "supported_by" 1 it did not cite is ignored): 2 of 3
    assert scores["citation_precision"].value == pytest.approx(2 / 3)
    # claims: s1, s2 backed, s3 not: 2 of 3
    assert scores["citation_recall"].value == pytest.approx(2 / 3)
    assert "without: It is blue." in scores["citation_recall"].reason


async def test_a_citation_of_a_passage_never_returned_counts_as_unsupported() -> None:
    conv = cited("The kettle holds 1.7 litres [1][5].", k=3)
    model, backend = scripted_judge(responder=None)
    backend.enqueue({"sentences": [{"sentence": 1, "reason": "p1", "claim": True, "supported_by": [1]}]})
    scores = {s.metric: s for s in await Evaluator(Judge(model), BOTH).score_conversations([conv])}
    assert scores["citation_precision"].value == pytest.approx(1 / 2)
    assert "1 citation(s) of a passage the target did not return" in scores["citation_precision"].reason
    assert "cites: 1 --" not in backend.calls[0].text and "cites: 1\n" in backend.calls[0].text


async def test_no_citations_are_unscored_without_asking_and_no_claim_leaves_recall_unscored() -> None:
    model, backend = scripted_judge(responder=None)
    scores = await Evaluator(Judge(model), BOTH).score_conversations([cited("It holds 1.7 litres.")])
    assert all(s.value is None and s.unscored_reason == NO_CITATIONS for s in scores)
    assert backend.calls == []
    backend.enqueue({"sentences": [{"sentence": 1, "reason": "a greeting", "claim": False, "supported_by": []}]})
    scores = {s.metric: s for s in await Evaluator(Judge(model), BOTH).score_conversations([cited("Hello [1].")])}
    assert scores["citation_precision"].value == 0.0
    assert scores["citation_recall"].value is None
    assert "no sentence" in (scores["citation_recall"].unscored_reason or "")


async def test_a_citations_field_names_passages_by_rank_or_id() -> None:
    reply = coerce_reply(
        {
            "answer": "It holds 1.7 litres. It boils fast.",
            "contexts": [{"text": "passage 1", "id": "a"}, {"text": "passage 2", "id": "b"}],
            "citations": [{"id": "b", "sentence": "It boils fast."}, 1],
        },
        0.1,
    )
    assert reply.citations == [Citation(context=2, sentence="It boils fast."), Citation(context=1)]
    with pytest.raises(TargetError, match="context id 'z'"):
        coerce_reply({"answer": "x", "contexts": [], "citations": [{"id": "z"}]}, 0.1)
    conv = cited(reply.answer, citations=reply.citations, k=2)
    units = [(s.text, s.cited) for s in cited_sentences(conv.turns[0])]
    assert units == [("It boils fast.", [2]), ("It holds 1.7 litres. It boils fast.", [1])]
