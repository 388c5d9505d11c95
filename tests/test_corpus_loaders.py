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
