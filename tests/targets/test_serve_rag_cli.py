from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import yaml

from ragdive.cli.main import main
from ragdive.cli.serve_rag import build_app
from ragdive.config import load_config

from .conftest import write_config


def test_serve_rag_needs_a_reference_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "exp.yaml"
    config.write_text(yaml.safe_dump({"target": {"type": "http", "url": "http://127.0.0.1:1/chat"}}))
    assert main(["serve-rag", str(config)]) == 2
    assert "serve-rag needs `target: {type: reference}`" in capsys.readouterr().err


def test_serve_rag_needs_a_generator(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "exp.yaml"
    config.write_text(yaml.safe_dump({"corpus": {"path": str(corpus)}, "target": {"type": "reference"}}))
    assert main(["serve-rag", str(config)]) == 2
    assert "no generator model" in capsys.readouterr().err


async def test_app_in_process_answers_and_validates(tmp_path: Path, corpus: Path) -> None:
    config = load_config(write_config(tmp_path / "exp.yaml", corpus, tmp_path / "index", top_k=3))
    app, rag = build_app(config)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://rag") as client:
        ok = await client.post("/chat", json={"message": "volcano, bees, river or chess?", "history": []})
        assert ok.status_code == 200 and len(ok.json()["contexts"]) == 3
        json_type = {"content-type": "application/json"}
        assert (await client.post("/chat", content=b"{nope", headers=json_type)).status_code == 400
        assert (await client.post("/chat", content=b"{nope")).status_code == 415  # not declared JSON
        assert (await client.post("/chat", json={"message": "x", "thread_id": "nope"})).status_code == 404
        bad = await client.post("/v1/chat/completions", json={"messages": [{"role": "assistant", "content": "x"}]})
        assert bad.status_code == 400 and "end with a user message" in bad.json()["error"]
        health = await client.get("/health")
    assert health.json()["target"] == rag.describe()
