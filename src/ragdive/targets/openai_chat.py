"""`openai-chat` target: an OpenAI-compatible chat endpoint, sent the whole conversation every turn.

This talks to the *system under test*, not to one of ragdive's own LLM roles, so it uses its own HTTP client and stays
independent of the model layer (its retries, cache and usage ledger are for ragdive's models)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..config.target import OpenAIChatTargetConfig
from ..errors import TargetError
from ..records import TargetReply
from .base import DialogueState, Target
from .http_support import TargetClient, check_reachable, compile_path, read_answer, read_contexts, request_json, search

if TYPE_CHECKING:
    import httpx  # a caller's own client: imported by that caller

ANSWER_PATH = "choices[0].message.content"


class OpenAIChatTarget(Target):
    def __init__(self, config: OpenAIChatTargetConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self._answer = compile_path(ANSWER_PATH, "answer")
        self._contexts = compile_path(config.contexts_field, "target.contexts_field")
        self._headers = dict(config.headers)
        if config.api_key:
            self._headers["Authorization"] = f"Bearer {config.api_key}"
        self._client: httpx.AsyncClient | TargetClient = client or TargetClient(config.timeout_s)

    async def check_reachable(self) -> None:
        await check_reachable(self.url, min(self.config.timeout_s, 10.0))

    def describe(self) -> str:
        return f"openai-chat {self.config.model} at {self.config.base_url}"

    def messages(self, conversation: DialogueState, user_message: str) -> list[dict[str, str]]:
        out = [{"role": "system", "content": self.config.system_prompt}] if self.config.system_prompt else []
        out += [m.model_dump() for m in conversation.history]
        out.append({"role": "user", "content": user_message})
        return out

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        body = {
            **self.config.extra_body,
            "model": self.config.model,
            "messages": self.messages(conversation, user_message),
        }
        began = time.perf_counter()
        data = await request_json(
            self._client,
            "POST",
            self.url,
            body=body,
            headers=self._headers,
            max_retries=self.config.max_retries,
            backoff_s=self.config.retry_backoff_s,
        )
        latency = time.perf_counter() - began
        if not isinstance(data, dict) or "choices" not in data:
            raise TargetError(f"{self.url} did not answer a chat completion: {str(data)[:300]}", body=str(data))
        answer = read_answer(self._answer, data, ANSWER_PATH)
        contexts = []
        if self._contexts is not None:
            found = search(self._contexts, data, f"contexts_field {self.config.contexts_field!r}", data)
            contexts = read_contexts(found)
        return TargetReply(answer=answer, contexts=contexts, latency_s=latency, raw=data)

    async def aclose(self) -> None:
        await self._client.aclose()
