from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import Section


class CorpusConfig(Section):
    """Where the knowledge base's documents are and how seed documents are drawn."""

    path: str
    """A folder of .md/.txt files, or a .jsonl file with id, title, text."""
    format: Literal["auto", "folder", "jsonl"] = "auto"
    """auto: folder or .jsonl by what the path is."""
    sampling: Literal["single", "related"] = "single"
    """single: one seed document per conversation; related: 2-3 documents that share terms (BM25 neighbours), so a
    conversation can need facts from more than one document (multi-hop)."""
    group_size: int = Field(default=2, ge=2, le=3)
    """Documents per group with related sampling."""
    max_documents: int | None = Field(default=None, ge=1)
    """Read at most this many documents (quick runs)."""
    encoding: str = "utf-8"
    """Text encoding of the corpus files: utf-8 (strict: a file that does not decode is an error naming it), any
    Python codec name (latin-1, cp1252...), or auto to detect it per file
    (charset-normalizer; a guess: name the encoding when you know it)."""
    max_document_tokens: int | None = Field(default=None, ge=16)
    """Largest document, in tokens (words and punctuation marks); larger ones are handled by on_oversize."""
    on_oversize: Literal["truncate", "skip", "fail"] = "truncate"
    """truncate: keep the first max_document_tokens tokens; skip: leave the document out; fail: stop with an error."""
