"""The knowledge base: documents and how seed documents are drawn from it."""

from .limits import SizeLimit, count_tokens
from .loaders import TEXT_SUFFIXES, CorpusSummary, LoadedCorpus, load_corpus, load_documents

__all__ = [
    "TEXT_SUFFIXES",
    "CorpusSummary",
    "LoadedCorpus",
    "SizeLimit",
    "count_tokens",
    "load_corpus",
    "load_documents",
]
