from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdive.corpus import SizeLimit, count_tokens, load_corpus, load_documents
from ragdive.errors import ConfigError


def test_folder_of_markdown_and_text(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.md").write_text("# Bee_Keeping\n\nBees make honey.")
    (tmp_path / "sub" / "a.txt").write_text("Ants carry leaves.")
    (tmp_path / "empty.md").write_text("   ")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    docs = load_documents(tmp_path)
    assert [d.id for d in docs] == ["b", "sub/a"]
    assert docs[0].title == "Bee Keeping" and docs[1].title == "a"
    assert load_documents(tmp_path, limit=1)[0].id == "b"


def test_jsonl(tmp_path: Path) -> None:
    f = tmp_path / "docs.jsonl"
    f.write_text(
        "\n".join(
            json.dumps(r) for r in [{"id": "z", "title": "Zed", "text": "zzz", "lang": "en"}, {"text": "no id here"}]
        )
    )
    docs = load_documents(f)
    assert [d.id for d in docs] == ["2", "z"]
    assert docs[1].metadata == {"lang": "en"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": 1}\n', 'line 1: each line needs a non-empty "text"'),
        ("not json\n", "line 1: not valid JSON"),
        ('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', "duplicate document id 'a'"),
        ("", "has no documents"),
    ],
)
def test_bad_jsonl_is_a_clear_config_error(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "docs.jsonl"
    f.write_text(content)
    with pytest.raises(ConfigError, match=message):
        load_documents(f)


def test_missing_or_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_documents(tmp_path / "nope")
    with pytest.raises(ConfigError, match="has no documents"):
        load_documents(tmp_path)


def test_squad_corpus_loads(squad_dir: Path) -> None:
    docs = load_documents(squad_dir / "corpus")
    assert len(docs) == 440
    assert all(d.text for d in docs)


def test_a_corpus_file_that_is_not_utf8_is_named_not_garbled(tmp_path: Path) -> None:
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_bytes(json.dumps({"id": "a", "text": "ok"}).encode() + b'\n{"id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(ConfigError, match=r"docs.jsonl is not UTF-8 \(byte 0xe9 on line 2\); set corpus.encoding"):
        load_documents(jsonl)
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\nfine text")
    (folder / "latin.md").write_bytes("# Café\nune crème brûlée".encode("latin-1"))
    with pytest.raises(ConfigError, match="latin.md is not UTF-8"):
        load_documents(folder)  # never silently decoded with replacement characters


def test_a_binary_file_renamed_md_is_skipped_and_counted_and_a_bom_is_fine(tmp_path: Path) -> None:
    (tmp_path / "picture.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    (tmp_path / "notes.md").write_bytes("\ufeff# Notes\ntext".encode())
    loaded = load_corpus(tmp_path)
    (doc,) = loaded.documents
    assert doc.title == "Notes" and not doc.text.startswith("\ufeff")
    assert loaded.summary.binary_skipped == ["picture.md"]
    assert "1 binary file(s) skipped (picture.md)" in loaded.summary.line()
    (tmp_path / "notes.md").unlink()
    with pytest.raises(ConfigError, match=r"has no documents .*1 binary file\(s\) skipped"):
        load_corpus(tmp_path)  # a corpus of nothing but binaries says why it is empty


def test_a_latin1_corpus_reads_with_corpus_encoding(tmp_path: Path) -> None:
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_bytes(json.dumps({"id": "b", "text": "caf\u00e9"}, ensure_ascii=False).encode("latin-1") + b"\n")
    with pytest.raises(ConfigError, match="corpus.encoding"):
        load_documents(jsonl)  # never "unexpected error ... bug"
    (doc,) = load_documents(jsonl, encoding="latin-1")
    assert doc.text == "caf\u00e9"
    with pytest.raises(ConfigError, match="'klingon' is not a known text encoding"):
        load_documents(jsonl, encoding="klingon")


def test_encoding_auto_detects_each_file(tmp_path: Path) -> None:
    pytest.importorskip("charset_normalizer")
    (tmp_path / "latin.md").write_bytes(
        ("# Caf\u00e9\n" + "Une cr\u00e8me br\u00fbl\u00e9e tr\u00e8s sucr\u00e9e. " * 20).encode("cp1252")
    )
    (tmp_path / "utf8.md").write_text("# Stra\u00dfe\nDie Stra\u00dfe ist gr\u00fcn und sch\u00f6n.", encoding="utf-8")
    docs = {d.id: d for d in load_documents(tmp_path, encoding="auto")}
    # detection is a guess (cp1250 and cp1252 share these bytes for é): decoded without replacement characters
    assert docs["latin"].title == "Caf\u00e9" and "\ufffd" not in docs["latin"].text
    assert "Stra\u00dfe" in docs["utf8"].text


@pytest.mark.parametrize("on_oversize", ["truncate", "skip", "fail"])
def test_documents_over_max_document_tokens(tmp_path: Path, on_oversize: str) -> None:
    (tmp_path / "small.md").write_text("# Small\nA short note.")
    (tmp_path / "huge.md").write_text("# Huge\n" + "word, " * 5000)
    limit = SizeLimit(100, on_oversize)  # type: ignore[arg-type]
    if on_oversize == "fail":
        with pytest.raises(ConfigError, match=r"'huge' .* more than 100 tokens .*corpus.on_oversize"):
            load_corpus(tmp_path, size_limit=limit)
        return
    loaded = load_corpus(tmp_path, size_limit=limit)
    docs = {d.id: d for d in loaded.documents}
    assert docs["small"].text == "# Small\nA short note."  # within the limit: untouched
    if on_oversize == "skip":
        assert "huge" not in docs and loaded.summary.oversize_skipped == ["huge"]
        assert "1 over 100 tokens skipped (huge)" in loaded.summary.line()
    else:
        assert count_tokens(docs["huge"].text) == 100
        assert "1 truncated to 100 tokens (huge)" in loaded.summary.line()


def test_a_document_of_exactly_the_limit_is_not_cut(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("one two three four five six seven eight nine ten " * 2)
    (doc,) = load_documents(tmp_path, size_limit=SizeLimit(20, "fail"))
    assert count_tokens(doc.text) == 20


def test_a_json_string_may_hold_a_unicode_line_separator(tmp_path: Path) -> None:
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text(json.dumps({"id": "a", "text": "one\u2028two"}, ensure_ascii=False) + "\n", encoding="utf-8")
    (doc,) = load_documents(jsonl)
    assert doc.text == "one\u2028two"


def test_a_huge_document_without_a_size_limit_is_said_loudly(tmp_path: Path) -> None:
    from ragdive.corpus.loaders import LARGE_DOCUMENT_CHARS

    (tmp_path / "small.md").write_text("A small note about bees.\n")
    dump = "word " * (LARGE_DOCUMENT_CHARS // 5 + 10)
    (tmp_path / "dump.txt").write_text(dump)
    line = load_corpus(tmp_path).summary.line()
    assert f"WARNING: dump.txt has {len(dump.strip()):,} characters" in line and "corpus.max_document_tokens" in line
    limited = load_corpus(tmp_path, size_limit=SizeLimit(1000)).summary.line()
    assert "WARNING" not in limited and "1 truncated to 1000 tokens" in limited
