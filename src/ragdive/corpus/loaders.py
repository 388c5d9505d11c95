"""Read a knowledge base into Documents: a folder of .md/.txt files, or a JSONL file with id/title/text."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError
from ..records import Document

TEXT_SUFFIXES = (".md", ".markdown", ".txt")


def load_documents(path: Path | str, *, format: str = "auto", limit: int | None = None) -> list[Document]:
    """Load documents sorted by id (so sampling with a seed is repeatable). An empty corpus is a ConfigError:
    nothing can be simulated from it, and saying so now beats an empty run later."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"corpus {path} does not exist")
    fmt = format if format != "auto" else ("folder" if path.is_dir() else "jsonl")
    if fmt == "folder":
        if not path.is_dir():
            raise ConfigError(f"corpus {path} is not a folder")
        docs = _load_folder(path, limit)
    elif fmt == "jsonl":
        if not path.is_file():
            raise ConfigError(f"corpus {path} is not a file")
        docs = _load_jsonl(path, limit)
    else:
        raise ConfigError(f"unknown corpus format {format!r}; use auto, folder or jsonl")
    if not docs:
        raise ConfigError(f"corpus {path} has no documents (expected {', '.join(TEXT_SUFFIXES)} files or JSONL)")
    return docs


def _load_folder(root: Path, limit: int | None) -> list[Document]:
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    docs: list[Document] = []
    for file in files:
        text = read_text(file).strip()
        if not text:
            continue  # an empty file is not a document
        rel = file.relative_to(root)
        docs.append(
            Document(id=rel.with_suffix("").as_posix(), title=_title(text, file), text=text, source=rel.as_posix())
        )
        if limit and len(docs) >= limit:
            break
    return docs


def read_text(file: Path) -> str:
    """A corpus file's text, strictly UTF-8 (a BOM is allowed). Replacement characters would put garbage into every
    prompt and ground truth built from the file, and a binary file renamed .md would become a seed document, so
    both are one ConfigError naming the file, before anything is simulated."""
    data = file.read_bytes()
    if b"\x00" in data[:8192]:
        raise ConfigError(f"corpus file {file} looks binary (it contains NUL bytes), not text: remove it")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"corpus file {file} is not UTF-8 (byte 0x{data[exc.start]:02x} on line {line}); "
            f"convert it, e.g. iconv -f latin1 -t utf-8 {file.name}"
        ) from None


def _title(text: str, file: Path) -> str:
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if first.startswith("#"):
        return first.lstrip("#").strip().replace("_", " ")
    return file.stem.replace("_", " ")


def _load_jsonl(file: Path, limit: int | None) -> list[Document]:
    docs: list[Document] = []
    seen: set[str] = set()
    for number, line in enumerate(read_text(file).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{file} line {number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or not isinstance(row.get("text"), str) or not row["text"].strip():
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
