"""Read a knowledge base into Documents: a folder of .md/.txt files, or a JSONL file with id/title/text.

What loading did is kept in a CorpusSummary (documents read, binary files skipped, documents over the size limit
truncated or skipped) so a command can say it in one line: a corpus that silently lost half its files, or sent a
50 MB document whole into every prompt, is the kind of surprise this avoids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from ..json_lines import json_objects
from ..records import Document
from .limits import SizeLimit

TEXT_SUFFIXES = (".md", ".markdown", ".txt")


@dataclass
class CorpusSummary:
    path: str
    documents: int = 0
    binary_skipped: list[str] = field(default_factory=list)
    empty_skipped: int = 0
    truncated: list[str] = field(default_factory=list)
    oversize_skipped: list[str] = field(default_factory=list)
    limit_tokens: int | None = None
    encoding: str = "utf-8"
    oversized: tuple[str, int] | None = None
    """The largest document (id, characters) when it is over LARGE_DOCUMENT_CHARS and no size limit is set."""

    def line(self) -> str:
        """One line: what was read, and everything that was not read as it is."""
        parts = [f"corpus: {self.documents} document(s) from {self.path}"]
        if self.encoding != "utf-8":
            parts.append(f"encoding {self.encoding}")
        if self.binary_skipped:
            parts.append(f"{len(self.binary_skipped)} binary file(s) skipped ({_some(self.binary_skipped)})")
        if self.empty_skipped:
            parts.append(f"{self.empty_skipped} empty file(s) skipped")
        if self.truncated:
            parts.append(f"{len(self.truncated)} truncated to {self.limit_tokens} tokens ({_some(self.truncated)})")
        if self.oversize_skipped:
            parts.append(
                f"{len(self.oversize_skipped)} over {self.limit_tokens} tokens skipped ({_some(self.oversize_skipped)})"
            )
        if self.oversized:
            doc, chars = self.oversized
            parts.append(
                f"WARNING: {doc} has {chars:,} characters, held in memory whole and quoted whole in prompts; "
                "set corpus.max_document_tokens (e.g. 100000) to cut or skip such documents"
            )
        return "; ".join(parts)


def _some(names: list[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


LARGE_DOCUMENT_CHARS = 2_000_000
"""A document this large (a book, a dump; real passages are a few thousand characters) without a size limit is
said loudly: a 50 MB file took 873 MB of memory unannounced."""


@dataclass
class LoadedCorpus:
    documents: list[Document]
    summary: CorpusSummary


def load_documents(
    path: Path | str,
    *,
    format: str = "auto",
    limit: int | None = None,
    encoding: str = "utf-8",
    size_limit: SizeLimit | None = None,
) -> list[Document]:
    """Load documents sorted by id (so sampling with a seed is repeatable); see load_corpus."""
    return load_corpus(path, format=format, limit=limit, encoding=encoding, size_limit=size_limit).documents


def load_corpus(
    path: Path | str,
    *,
    format: str = "auto",
    limit: int | None = None,
    encoding: str = "utf-8",
    size_limit: SizeLimit | None = None,
) -> LoadedCorpus:
    """Load documents sorted by id, with a summary of what was skipped or cut. An empty corpus is a ConfigError:
    nothing can be simulated from it, and saying so now beats an empty run later.

    ``encoding``: utf-8 (strict, the default), any Python codec name (latin-1, cp1252...), or ``auto`` to detect
    it per file (charset-normalizer). ``size_limit``: documents over ``max_tokens`` are truncated, skipped or a
    ConfigError, as it says."""
    path = Path(path)
    summary = CorpusSummary(str(path), limit_tokens=size_limit.max_tokens if size_limit else None, encoding=encoding)
    reader = _Reader(encoding, summary)
    if not path.exists():
        raise ConfigError(f"corpus {path} does not exist")
    fmt = format if format != "auto" else ("folder" if path.is_dir() else "jsonl")
    if fmt == "folder":
        if not path.is_dir():
            raise ConfigError(f"corpus {path} is not a folder")
        docs = _load_folder(path, limit, reader)
    elif fmt == "jsonl":
        if not path.is_file():
            raise ConfigError(f"corpus {path} is not a file")
        docs = _load_jsonl(path, limit, reader)
    else:
        raise ConfigError(f"unknown corpus format {format!r}; use auto, folder or jsonl")
    if size_limit is not None:
        docs = size_limit.apply(docs, summary.truncated, summary.oversize_skipped)
    elif docs:
        largest = max(docs, key=lambda d: len(d.text))
        if len(largest.text) > LARGE_DOCUMENT_CHARS:  # said loudly on the corpus line every command prints
            summary.oversized = (largest.source or largest.id, len(largest.text))
    if not docs:
        why = f" ({summary.line()})" if summary.binary_skipped or summary.oversize_skipped else ""
        raise ConfigError(f"corpus {path} has no documents (expected {', '.join(TEXT_SUFFIXES)} files or JSONL){why}")
    summary.documents = len(docs)
    return LoadedCorpus(docs, summary)


def _load_folder(root: Path, limit: int | None, reader: _Reader) -> list[Document]:
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    docs: list[Document] = []
    for file in files:
        if looks_binary(file):  # a picture renamed .md: skipped and counted, never a garbage seed document
            reader.summary.binary_skipped.append(file.relative_to(root).as_posix())
            continue
        text = reader.read(file).strip()
        if not text:
            reader.summary.empty_skipped += 1
            continue  # an empty file is not a document
        rel = file.relative_to(root)
        docs.append(
            Document(id=rel.with_suffix("").as_posix(), title=_title(text, file), text=text, source=rel.as_posix())
        )
        if limit and len(docs) >= limit:
            break
    return docs


def looks_binary(file: Path) -> bool:
    """NUL bytes in the first 8 KiB: no text encoding a corpus would use puts them there (UTF-16 aside)."""
    with file.open("rb") as handle:
        return b"\x00" in handle.read(8192)


class _Reader:
    def __init__(self, encoding: str, summary: CorpusSummary) -> None:
        self.encoding = encoding
        self.summary = summary

    def read(self, file: Path) -> str:
        return read_text(file, self.encoding)


def read_text(file: Path, encoding: str = "utf-8") -> str:
    """A corpus file's text, strictly in ``encoding`` (UTF-8 by default; a BOM is allowed). Replacement characters
    would put garbage into every prompt and ground truth built from the file, so a file that does not decode is
    one ConfigError naming the file and the setting that fixes it, before anything is simulated."""
    data = file.read_bytes()
    if b"\x00" in data[:8192]:
        raise ConfigError(f"corpus file {file} looks binary (it contains NUL bytes), not text: remove it")
    if encoding == "auto":
        return _detected(file, data)
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    try:
        return data.decode(codec)
    except LookupError:
        raise ConfigError(
            f"corpus.encoding {encoding!r} is not a known text encoding (e.g. utf-8, latin-1, auto)"
        ) from None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        label = "UTF-8" if codec == "utf-8-sig" else encoding
        raise ConfigError(
            f"corpus file {file} is not {label} (byte 0x{data[exc.start]:02x} on line {line}); set "
            f"corpus.encoding (e.g. latin-1, or auto to detect it) or convert it: iconv -f latin1 -t utf-8 {file.name}"
        ) from None


def _detected(file: Path, data: bytes) -> str:
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        raise ConfigError("corpus.encoding: auto needs charset-normalizer: pip install 'ragdive[detect]'") from None
    best = from_bytes(data).best()
    if best is None:
        raise ConfigError(f"corpus file {file}: no text encoding fits its bytes; set corpus.encoding")
    return str(best).removeprefix("\ufeff")


def _title(text: str, file: Path) -> str:
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if first.startswith("#"):
        return first.lstrip("#").strip().replace("_", " ")
    return file.stem.replace("_", " ")


def _load_jsonl(file: Path, limit: int | None, reader: _Reader) -> list[Document]:
    docs: list[Document] = []
    seen: set[str] = set()
    for number, row in json_objects(reader.read(file), file):
        if not isinstance(row.get("text"), str) or not row["text"].strip():
            raise ConfigError(f'{file} line {number}: each line needs a non-empty "text" field')
        doc_id = str(row.get("id", number))
        if doc_id in seen:
            raise ConfigError(f"{file} line {number}: duplicate document id {doc_id!r}")
        seen.add(doc_id)
        extra = {k: v for k, v in row.items() if k not in ("id", "title", "text", "source")}
        docs.append(
            Document(
                id=doc_id,
                title=str(row.get("title") or doc_id),
                text=row["text"].strip(),
                source=row.get("source") or f"{file.name}#{number}",
                metadata=extra,
            )
        )
        if limit and len(docs) >= limit:
            break
    return sorted(docs, key=lambda d: d.id)
