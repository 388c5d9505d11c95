"""The knowledge base: documents and how seed documents are drawn from it."""

from .loaders import TEXT_SUFFIXES, load_documents

__all__ = ["TEXT_SUFFIXES", "load_documents"]
