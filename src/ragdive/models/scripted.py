"""`scripted/<name>`: the deterministic test double.

Outputs come from a queue (strings, dicts, pydantic objects, or exceptions to raise) or from a function of the
messages. Every call is recorded so tests can assert on exactly what a model was sent.
"""

from __future__ import annotations

import inspect
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..importing import import_callable
from ..records import Usage
from .base import Completion, GenerateParams, Message, ModelBackend

Responder = Callable[..., Any]


@dataclass
class ScriptedCall:
    messages: list[Message]
    schema: type[BaseModel] | None
    params: GenerateParams | None

    @property
    def text(self) -> str:
        """All message contents joined: handy for `assert "persona" in call.text`."""
        return "\n".join(m.content for m in self.messages)


class ScriptedModel(ModelBackend):
    provider = "scripted"

    def __init__(
        self, name: str = "scripted/test", *, responder: Responder | str | None = None, **options: Any
    ) -> None:
        super().__init__(name, **options)
        if isinstance(responder, str):
            # named in YAML (`options: {responder: "module:function"}`), so a config can use a deterministic
            # double across processes, e.g. a served reference RAG in tests
            responder = import_callable(responder, what="scripted responder")
        self._queue: deque[Any] = deque()
        self.responder = responder
        self.calls: list[ScriptedCall] = []

    def enqueue(self, *outputs: Any) -> ScriptedModel:
        """Queue outputs, answered in order. An Exception instance is raised instead of answered."""
        self._queue.extend(outputs)
        return self

    async def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: GenerateParams | None = None,
    ) -> Completion:
        self.calls.append(ScriptedCall(list(messages), schema, params))
        if self._queue:
            output = self._queue.popleft()
        elif self.responder is not None:
            output = self.responder(messages, schema) if _arity(self.responder) >= 2 else self.responder(messages)
            if inspect.isawaitable(output):
                output = await output
        else:
            hint = ""
            if schema is not None and len(self.calls) > 1 and self.calls[-2].schema is schema:
                hint = "; an invalid structured answer gets one corrective retry, so enqueue a second output"
            raise RuntimeError(f"{self.name}: no scripted output left (call {len(self.calls)}){hint}")
        if isinstance(output, BaseException):
            raise output
        if isinstance(output, Completion):
            return output
        text = _to_text(output)
        prompt_tokens = sum(len(m.content.split()) for m in messages)
        return Completion(
            text=text,
            model=self.name,
            usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=len(text.split())),
            finish_reason="stop",
        )


def _to_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, BaseModel):
        return output.model_dump_json()
    return json.dumps(output)


def _arity(fn: Callable[..., Any]) -> int:
    try:
        return len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return 1
