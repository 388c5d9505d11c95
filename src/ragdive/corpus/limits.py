"""A per-document size limit, so one huge file cannot blow up every prompt it is sent in (a 50 MB document was
accepted whole: ~1 GB peak memory and prompts no model takes)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..errors import ConfigError
from ..records import Document

# The same token measure as the reference RAG's chunks (words and punctuation marks, targets/reference/chunking.py):
# a rough count of model tokens that needs no tokenizer and never depends on which model reads the text.
_TOKEN = re.compile(r"\w+|[^\w\s]")

OnOversize = Literal["truncate", "skip", "fail"]


def count_tokens(text: str) -> int:
    return sum(1 for _ in _TOKEN.finditer(text))


@dataclass(frozen=True)
class SizeLimit:
    max_tokens: int
    on_oversize: OnOversize = "truncate"

    def apply(self, documents: list[Document], truncated: list[str], skipped: list[str]) -> list[Document]:
        """The documents within the limit; the ids of those cut or left out are appended to the lists given."""
        kept: list[Document] = []
        for doc in documents:
            end = self._cut(doc.text)
            if end is None:
                kept.append(doc)
            elif self.on_oversize == "fail":
                raise ConfigError(
                    f"corpus document {doc.id!r} ({doc.source or doc.id}) has more than {self.max_tokens} tokens "
                    "(corpus.max_document_tokens); raise the limit, or set corpus.on_oversize to truncate or skip"
                )
            elif self.on_oversize == "skip":
                skipped.append(doc.id)
            else:
                truncated.append(doc.id)
                kept.append(doc.model_copy(update={"text": doc.text[:end].rstrip()}))
        return kept

    def _cut(self, text: str) -> int | None:
        """Where the text's ``max_tokens``-th token ends, or None when the text is within the limit."""
        for number, match in enumerate(_TOKEN.finditer(text), start=1):
            if number == self.max_tokens:
                end = match.end()
                return end if _TOKEN.search(text, end) else None
        return None
