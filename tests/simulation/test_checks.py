from __future__ import annotations

import pytest

from ragdive.records import Document, FailedCheck
from ragdive.simulation.checks import DocumentIndex, deterministic_checks, mentions_document
from tests.factories import make_draft

DOC = Document(
    id="normans",
    text=(
        "The Normans were the people who in the 10th and 11th centuries gave their name to Normandy, a region in "
        "France. They were descended from Norse raiders and pirates from Denmark, Iceland and Norway."
    ),
)
INDEX = DocumentIndex([DOC])


@pytest.mark.parametrize(
    "quote",
    [
        "gave their name to Normandy",  # exact
        "THE NORMANS were the people who,   in the 10th and 11th centuries",  # case, punctuation, spaces
        "They were descended from Norse raiders and pirates from Denmark and Norway",  # a word dropped
        "the people who in the 10th and 11th centuries gave their names to Normandy",  # one word changed
    ],
)
def test_evidence_found_despite_small_differences(quote: str) -> None:
    assert INDEX.contains(quote)


@pytest.mark.parametrize(
    "quote",
    [
        "The Normans founded Paris in the year 900 with great ceremony",  # invented sentence
        "Normans were Vikings",  # short: must match exactly
        "no",  # a piece of a word ("Normans", "Norway") is not a quote
        "rmans were the peop",
        "They were descended from Saxon farmers and monks from England",  # same frame, other facts
        "",
    ],
)
def test_fabricated_evidence_is_not_found(quote: str) -> None:
    assert not INDEX.contains(quote)


def test_threshold_one_demands_an_exact_normalised_match() -> None:
    quote = "They were descended from Norse raiders and pirates from Denmark and Norway"
    assert not INDEX.contains(quote, threshold=1.0)


@pytest.mark.parametrize(
    ("text", "mentioned"),
    [
        ("According to the document, who were the Normans?", True),
        ("What does the text say about Normandy?", True),
        ("In the passage, where is Normandy?", True),
        ("Based on the provided context, who?", True),
        ("What is in the text of the treaty?", False),
        ("In the context of the raids, who led them?", False),
        ("Who were the Normans?", False),
    ],
)
def test_document_mentions(text: str, mentioned: bool) -> None:
    assert mentions_document(text) is mentioned


def categories(draft: object, turn_index: int = 0) -> set[str]:
    return {c for c, _ in deterministic_checks(draft, turn_index=turn_index, index=INDEX)}  # type: ignore[arg-type]


def test_turn_rules() -> None:
    ok = make_draft(
        0,
        rag_input="Who were the Normans?",
        standalone_question="Who were the Normans?",
        evidence=["gave their name to Normandy"],
        question_type="initial",
    )
    assert categories(ok) == set()
    # turn 1: the two questions must be identical and the type initial
    assert categories(ok.model_copy(update={"standalone_question": "Who are they?"})) == {"question_inconsistent"}
    assert categories(ok.model_copy(update={"question_type": "follow-up"})) == {"wrong_type"}
    # later turns: rag_input must not just repeat the stand-alone question, initial is wrong
    later = ok.model_copy(update={"question_type": "follow-up"})
    assert categories(later, turn_index=2) == {FailedCheck.RAG_INPUT_NOT_CONNECTED}
    assert "wrong_type" in categories(ok, turn_index=1)
    connected = later.model_copy(update={"rag_input": "And who were they?", "refers_to_turn": 5})
    assert categories(connected, turn_index=2) == {"rag_input_not_connected"}  # turn 6 does not exist yet
    assert categories(connected.model_copy(update={"refers_to_turn": 1}), turn_index=2) == set()


def test_evidence_answer_and_probe_rules() -> None:
    base = make_draft(
        0,
        rag_input="Who?",
        standalone_question="Who?",
        question_type="initial",
        evidence=["gave their name to Normandy"],
    )
    assert categories(base.model_copy(update={"evidence": []})) == {"ground_truth_unsupported"}
    assert categories(base.model_copy(update={"evidence": ["Normans were Vikings"]})) == {"evidence_not_in_document"}
    probe = base.model_copy(update={"unanswerable": True, "evidence": [], "ground_truth": "Not in the knowledge base."})
    assert categories(probe) == set()
    assert categories(probe.model_copy(update={"ground_truth": "In 911."})) == {"ground_truth_unsupported"}


def test_long_document_lookup_stays_correct() -> None:
    filler = " ".join(f"word{i} filler text number {i}." for i in range(3000))
    index = DocumentIndex([Document(id="big", text=filler + " The castle was sold in 1888 to a railway company.")])
    assert index.contains("The castle was sold in 1888 to the railway company")
    assert not index.contains("The castle was burned in 1777 by an angry mob of farmers")
