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
