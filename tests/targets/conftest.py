"""Fixtures for the target tests: a small corpus, a deterministic embedder, and real loopback servers
(the reference RAG as a `ragdive serve-rag` subprocess, and a fault server for failure cases)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
import uvicorn
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ragdive.targets.reference import Embedder

REPO = Path(__file__).resolve().parents[2]
ECHO = "ragdive.targets.reference.doubles:echo_messages"

DOCS = {
    "volcanoes.md": "# Volcanoes\n\nA volcano is a rupture in the crust of a planet. Magma erupts as lava.\n\n"
    "Mount Etna in Sicily is one of the most active volcanoes in Europe. It erupted in 2021.",
    "bees.md": "# Bees\n\nHoney bees live in colonies ruled by a queen. Worker bees collect nectar and pollen.\n\n"
    "A colony can hold 60000 bees in summer. Bees communicate with a waggle dance.",
    "rivers.md": "# Rivers\n\nThe Danube flows through ten countries and ends in the Black Sea.\n\n"
    "The Nile is often called the longest river in the world, flowing north into the Mediterranean.",
    "chess.md": "# Chess\n\nChess is played on a board of 64 squares. Each player starts with sixteen pieces.\n\n"
    "The queen is the most powerful piece. Checkmate ends the game.",
}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


class HashEmbedder(Embedder):
    """A deterministic bag-of-words embedder (hashed words): cheap, and similar texts get similar vectors."""

    name = "test/hash-bow-64"

    def __init__(self) -> None:
        self.calls = 0

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(64, np.float32)
        for word in text.lower().split():
            word = word.strip(".,?!#")
            if len(word) > 3:
                v[int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1
        n = np.linalg.norm(v)
        return v / n if n else v

    def passages(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return np.vstack([self._vec(t) for t in texts])

    def query(self, text: str) -> np.ndarray:
        return self._vec(text)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_up(url: str, process: subprocess.Popen[bytes] | None = None, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"server exited early: {process.stderr.read().decode() if process.stderr else ''}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up in {timeout}s")


def write_config(path: Path, corpus: Path, index_dir: Path, **target: object) -> Path:
    config = {
        "corpus": {"path": str(corpus)},
        "models": {"target": {"model": "scripted/echo", "options": {"responder": ECHO}}},
        "target": {"type": "reference", "index_dir": str(index_dir), "top_k": 2, "chunk_size": 64, **target},
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def rag_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m ragdive serve-rag` in a real subprocess on 127.0.0.1, its generator the echo test double."""
    root = tmp_path_factory.mktemp("served")
    folder = root / "corpus"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    config = write_config(root / "experiment.yaml", folder, root / "index")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    process = subprocess.Popen(
        [sys.executable, "-m", "ragdive", "serve-rag", str(config), "--port", str(port), "--client-session-ids"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health", process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _fault_app() -> Starlette:
    counts: dict[str, int] = {}

    async def boom(request: Request) -> Response:
        counts["boom"] = counts.get("boom", 0) + 1
        return PlainTextResponse("index shard 3 is down", status_code=500)

    async def html(request: Request) -> Response:
        return PlainTextResponse("<html>maintenance</html>", status_code=200)

    async def flaky(request: Request) -> Response:
        counts["flaky"] = counts.get("flaky", 0) + 1
        if counts["flaky"] <= 2:
            return PlainTextResponse("try again", status_code=503)
        return JSONResponse({"answer": "recovered", "contexts": []})

    async def echo(request: Request) -> Response:
        body = (await request.json()) if request.method == "POST" else None
        return JSONResponse(
            {
                "out": {"text": "echoed"},
                "params": dict(request.query_params),
                "auth": request.headers.get("authorization"),
                "body": body,
                "choices": [{"message": {"role": "assistant", "content": "echoed"}}],
            }
        )

    async def slow(request: Request) -> Response:
        counts["slow"] = counts.get("slow", 0) + 1
        await asyncio.sleep(2)
        return JSONResponse({"answer": "too late"})

    async def count(request: Request) -> Response:
        return JSONResponse(counts)

    return Starlette(
        routes=[
            Route("/boom", boom, methods=["POST"]),
            Route("/html", html, methods=["POST"]),
            Route("/v1/chat/completions", html, methods=["POST"]),
            Route("/flaky", flaky, methods=["POST"]),
            Route("/count", count, methods=["GET"]),
            Route("/echo", echo, methods=["GET", "POST"]),
            Route("/v2/chat/completions", echo, methods=["POST"]),
            Route("/slow", slow, methods=["POST"]),
        ]
    )


@pytest.fixture
def fault_server() -> Iterator[str]:
    """A real loopback HTTP server that fails in chosen ways (500, non-JSON, 503 twice then OK)."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(_fault_app(), host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_until_up(f"http://127.0.0.1:{port}/count")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
