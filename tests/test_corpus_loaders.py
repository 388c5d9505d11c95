from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdive.corpus import load_documents
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
    with pytest.raises(ConfigError, match=r"docs.jsonl is not UTF-8 \(byte 0xe9 on line 2\); convert it"):
        load_documents(jsonl)
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\nfine text")
    (folder / "latin.md").write_bytes("# Café\nune crème brûlée".encode("latin-1"))
    with pytest.raises(ConfigError, match="latin.md is not UTF-8"):
        load_documents(folder)  # never silently decoded with replacement characters


def test_a_binary_file_renamed_md_is_refused_and_a_bom_is_fine(tmp_path: Path) -> None:
    (tmp_path / "picture.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    with pytest.raises(ConfigError, match="picture.md looks binary"):
        load_documents(tmp_path)
    (tmp_path / "picture.md").unlink()
    (tmp_path / "notes.md").write_bytes("\ufeff# Notes\ntext".encode())
    (doc,) = load_documents(tmp_path)
    assert doc.title == "Notes" and not doc.text.startswith("\ufeff")


def test_a_json_string_may_hold_a_unicode_line_separator(tmp_path: Path) -> None:
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text(json.dumps({"id": "a", "text": "one\u2028two"}, ensure_ascii=False) + "\n", encoding="utf-8")
    (doc,) = load_documents(jsonl)
    assert doc.text == "one\u2028two"
