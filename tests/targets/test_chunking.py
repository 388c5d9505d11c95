from __future__ import annotations

import pytest

from ragdive.records import Document
from ragdive.targets.reference import chunk_document, tokenize

TEXT = (
    "Para one. Sentence two is here! Third?\n\nSecond paragraph has words. "
    + " ".join(f"w{i}" for i in range(50))
    + ".\n\nLast one."
)


def test_tokenizer_counts_words_and_punctuation() -> None:
    assert tokenize("U.S. troops, 1,000 of them.") == [
        "U",
        ".",
        "S",
        ".",
        "troops",
        ",",
        "1",
        ",",
        "000",
        "of",
        "them",
        ".",
    ]


@pytest.mark.parametrize(("size", "overlap"), [(16, 0), (16, 4), (24, 8), (1000, 10)])
def test_chunks_respect_size_cover_the_text_and_overlap(size: int, overlap: int) -> None:
    doc = Document(id="d", text=TEXT, source="d.md")
    chunks = chunk_document(doc, size, overlap)
    assert all(0 < c.n_tokens <= size and len(tokenize(c.text)) == c.n_tokens for c in chunks)
    assert [c.id for c in chunks] == [f"d#{i}" for i in range(len(chunks))]
    assert all(c.source == "d.md" and c.text in TEXT for c in chunks)
    tokens = tokenize(TEXT)
    # consecutive chunks: no gap, and at most `overlap` shared tokens
    position = 0
    for chunk in chunks:
        n = chunk.n_tokens
        starts = [i for i in range(position - overlap, position + 1) if tokens[i : i + n] == tokenize(chunk.text)]
        assert starts, f"chunk {chunk.id} does not continue the previous one"
        position = starts[-1] + n
    assert position == len(tokens)
    if size >= len(tokens):
        assert len(chunks) == 1


def test_splits_on_paragraphs_then_sentences_before_tokens() -> None:
    chunks = chunk_document(Document(id="d", text=TEXT), 16, 0)
    assert chunks[0].text == "Para one. Sentence two is here! Third?\n\nSecond paragraph has words."
    # the 51-token sentence had to be cut on token boundaries
    assert chunks[1].text.startswith("w0 ") and chunks[1].n_tokens == 16
    sentences = chunk_document(Document(id="d", text="One two three. Four five six. Seven eight nine."), 8, 0)
    assert [c.text for c in sentences] == ["One two three. Four five six.", "Seven eight nine."]


def test_overlap_starts_on_a_sentence_when_one_fits() -> None:
    text = "Alpha beta gamma. Delta epsilon. Zeta eta theta iota. Kappa lambda mu."
    chunks = chunk_document(Document(id="d", text=text), 12, 5)
    assert [c.text for c in chunks] == [
        "Alpha beta gamma. Delta epsilon. Zeta eta theta iota.",
        "Zeta eta theta iota. Kappa lambda mu.",  # overlap starts on a sentence, not mid-sentence
    ]


def test_empty_document_gives_no_chunks() -> None:
    assert chunk_document(Document(id="d", text="   "), 16, 0) == []
