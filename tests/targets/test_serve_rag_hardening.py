"""`serve-rag` against hostile and malformed requests, on a real server process: a bearer token, JSON bodies only,
a size limit, server-issued session ids, and every malformed request a 4xx with a JSON error; the server stays up
and keeps answering well-formed requests."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import DOCS, REPO, free_port, wait_until_up, write_config

TOKEN = "serve-token-4f7a19c2e8"


@pytest.fixture(scope="module")
def hardened(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    root = tmp_path_factory.mktemp("hardened")
    folder = root / "corpus"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    config = write_config(root / "experiment.yaml", folder, root / "index")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "RAGDIVE_SERVE_TOKEN": TOKEN}  # the token from the env
    process = subprocess.Popen(
        [sys.executable, "-m", "ragdive", "serve-rag", str(config), "--port", str(port), "--max-body-bytes", "65536"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health", process)
        yield port
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
        assert TOKEN.encode() not in err  # the server never prints its token


def send(
    port: int,
    path: str,
    body: bytes | None = None,
    *,
    method: str = "POST",
    content_type: str | None = "application/json",
    token: str | None = TOKEN,
    chunked: bool = False,
) -> tuple[int, dict[str, Any], str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {}
    if content_type:
        headers["Content-Type"] = content_type
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if chunked and body is not None:
        connection.request(
            method,
            path,
            body=iter([body[i : i + 8192] for i in range(0, len(body), 8192)]),
            headers=headers,
            encode_chunked=True,
        )
    else:
        connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    text = response.read().decode("utf-8", errors="replace")
    connection.close()
    return response.status, dict(response.getheaders()), text


MALFORMED: list[tuple[str, dict[str, Any], int]] = [
    ("no token", {"body": b'{"message": "hi", "history": []}', "token": None}, 401),
    ("wrong token", {"body": b'{"message": "hi", "history": []}', "token": "guess"}, 401),
    ("text/plain body", {"body": b'{"message": "hi", "history": []}', "content_type": "text/plain"}, 415),
    ("form post", {"body": b"message=hi", "content_type": "application/x-www-form-urlencoded"}, 415),
    ("no content type", {"body": b'{"message": "hi", "history": []}', "content_type": None}, 415),
    ("huge body", {"body": b'{"message": "' + b"a" * 200_000 + b'", "history": []}'}, 413),
    ("huge chunked body", {"body": b'{"message": "' + b"a" * 200_000 + b'"}', "chunked": True}, 413),
    ("lone surrogate", {"body": b'{"message": "\\ud800", "history": []}'}, 400),
    ("invalid utf-8", {"body": b'{"message": "\xff\xfe", "history": []}'}, 400),
    ("deep json", {"body": b"[" * 30_000 + b"]" * 30_000}, 400),
    ("deep object", {"body": b'{"message": "hi", "history": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"}, 400),
    ("not json", {"body": b"{message: hi"}, 400),
    ("not an object", {"body": b'["hi"]'}, 400),
    ("no message", {"body": b'{"history": []}'}, 400),
    ("bad history", {"body": b'{"message": "hi", "history": [{"role": 5}]}'}, 400),
    ("foreign conversation id", {"body": b'{"message": "hi", "conversation_id": "someone-elses"}'}, 404),
    ("unknown thread id", {"body": b'{"message": "hi", "thread_id": "abc"}'}, 404),
]


@pytest.mark.parametrize(("label", "request_args", "status"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_every_malformed_request_is_a_4xx_json_error(
    hardened: int, label: str, request_args: dict[str, Any], status: int
) -> None:
    got, headers, text = send(hardened, "/chat", **request_args)
    assert got == status, (label, got, text[:300])
    assert headers.get("content-type", "").startswith("application/json"), headers
    assert set(json.loads(text)) == {"error"} and "Traceback" not in text


def test_unknown_paths_and_methods_are_json_too(hardened: int) -> None:
    for path, method, status in (("/nope", "POST", 404), ("/chat", "GET", 405)):
        got, headers, text = send(hardened, path, b"{}", method=method)
        assert got == status and headers["content-type"].startswith("application/json") and "error" in json.loads(text)


def test_the_server_stays_up_and_sessions_are_server_issued(hardened: int) -> None:
    for _, request_args, _ in MALFORMED:  # the whole battery again, then ordinary use
        send(hardened, "/chat", **request_args)
    assert send(hardened, "/health", method="GET", content_type=None, token=None)[0] == 200  # a probe needs no token
    status, _, text = send(hardened, "/sessions", b"")
    thread = json.loads(text)["thread_id"]
    assert status == 200 and len(thread) >= 32  # unguessable: 24 random bytes
    status, _, text = send(
        hardened, "/chat", json.dumps({"message": "What is a volcano?", "thread_id": thread}).encode()
    )
    assert status == 200 and json.loads(text)["thread_id"] == thread
    status, _, text = send(
        hardened,
        "/v1/chat/completions",
        json.dumps({"messages": [{"role": "user", "content": "What is the Danube?"}]}).encode(),
    )
    assert status == 200 and json.loads(text)["object"] == "chat.completion"


async def test_the_readmes_http_target_talks_to_a_server_with_a_token(hardened: int) -> None:
    from ragdive.config import HttpTargetConfig
    from ragdive.config.target import SessionStartConfig
    from ragdive.targets import DialogueState, build_target

    base = f"http://127.0.0.1:{hardened}"
    target = build_target(
        HttpTargetConfig(
            url=f"{base}/chat",
            headers={"Authorization": f"Bearer {TOKEN}"},
            session_start=SessionStartConfig(url=f"{base}/sessions", id_path="thread_id"),
            body={"message": "{message}", "thread_id": "{session_id}"},
        )
    )
    try:
        state = DialogueState(id="a")
        first = await target.respond(state, "What is a volcano?")
        second = await target.respond(state, "Which one is in Sicily?")
    finally:
        await target.aclose()
    assert first.contexts and "user: What is a volcano?" in second.answer
