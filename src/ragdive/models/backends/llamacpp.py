"""`llamacpp/<path.gguf>` and `llamacpp/default`: a GGUF model through llama-cpp-python, in a worker process.

`default` is the packaged Gemma-3-270M (a *base* model: good for plumbing and the offline demo, not a judge of
quality). llama.cpp runs in a worker process ragdive starts and owns (llamacpp_worker.py / llamacpp_process.py),
one per model file, shared by every role: a native crash becomes a ModelCrashed naming the cause and the fix
instead of killing ragdive, and a call past ``timeout_s`` really stops (the worker is killed and restarted).
``self_check()`` is one tiny decode, run before anything is simulated and by `ragdive models check`.

Messages are rendered as a plain transcript (see prompting.py: measured better than the fallback chat template
for the base model); ``options.chat_template: true`` uses the model's chat template instead. Structured output
uses a grammar compiled from the JSON schema, so the text is always syntactically valid JSON of that shape.
``options.worker_module`` swaps the worker (tests use doubles from ragdive.testing that crash or hang).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ...errors import ConfigError
from ...records import Usage
from ..base import Completion, GenerateParams, Message, ModelBackend
from ..local_files import default_gguf
from ..prompting import TURN_STOP, render_transcript
from ..structured import schema_text
from .llamacpp_process import WORKER_MODULE, Call, WorkerProcess, worker_for

DEFAULT_MAX_TOKENS = 512
SELF_CHECK_PROMPT = "The capital of France is"


def _require_llama_cpp() -> None:
    try:
        import llama_cpp  # noqa: F401 - only to fail early with the install hint
    except ImportError as exc:
        raise ConfigError("the llamacpp backend needs llama-cpp-python: pip install 'ragdive[local]'") from exc


@dataclass
class SelfCheck:
    text: str
    seconds: float
    pid: int | None


class LlamaCppBackend(ModelBackend):
    provider = "llamacpp"

    def __init__(
        self,
        name: str,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        chat_template: bool = False,
        worker_module: str = WORKER_MODULE,
        worker_args: list[str] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(name, **options)
        target = name.split("/", 1)[1]
        if worker_module == WORKER_MODULE:
            _require_llama_cpp()  # fail now, with the install hint, rather than at the first call
        if target == "default":
            self.path = None  # assembled lazily: building a model object must stay cheap
        else:
            self.path = Path(target).expanduser()
            if not self.path.is_file():
                raise ConfigError(f"{name}: no GGUF file at {self.path}")
        self.n_ctx = n_ctx
        # llama.cpp's own default is half the cores, one thread on a 2-core machine; the worker is the only heavy
        # computation while it decodes, and all cores measured 1.4x faster there (benchmarks/local_threads.py).
        self.n_threads = n_threads or os.cpu_count() or 1
        self.chat_template = chat_template
        self.worker_module = worker_module
        self.worker_args = list(worker_args or [])

    def worker(self) -> WorkerProcess:
        path = self.path or default_gguf()
        argv = [
            self.worker_module,
            "--model",
            str(path),
            "--n-ctx",
            str(self.n_ctx),
            "--n-threads",
            str(self.n_threads),
        ]
        argv += self.worker_args
        return worker_for(argv, self.name)

    async def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: GenerateParams | None = None,
    ) -> Completion:
        kwargs = _sampling(params or GenerateParams())
        request: dict[str, Any] = {"schema": schema_text(schema) if schema is not None else None}
        if self.chat_template:
            request["messages"] = [{"role": m.role, "content": m.content} for m in messages]
        else:
            stop = list(kwargs.pop("stop", None) or [])
            if schema is None:
                stop.append(TURN_STOP)  # a base model happily writes the user's next turn too
            kwargs["stop"] = stop
            request["prompt"] = render_transcript(messages)
        request["kwargs"] = kwargs
        reply = await self._send(request)
        usage = reply.get("usage") or {}
        return Completion(
            text=str(reply.get("text", "")).strip(),
            model=self.name,
            finish_reason=reply.get("finish_reason"),
            usage=Usage(
                prompt_tokens=usage.get("prompt_tokens", 0), completion_tokens=usage.get("completion_tokens", 0)
            ),
        )

    async def self_check(self) -> SelfCheck:
        """One tiny decode in the worker: a broken build dies here, in seconds, before anything is simulated."""
        began = time.perf_counter()
        request = {"prompt": SELF_CHECK_PROMPT, "schema": None, "kwargs": {"max_tokens": 4, "temperature": 0.0}}
        reply = await self._send(request)
        return SelfCheck(str(reply.get("text", "")).strip(), time.perf_counter() - began, self.worker().pid)

    async def _send(self, request: dict[str, Any]) -> dict[str, Any]:
        worker = await asyncio.to_thread(self.worker)  # may assemble the packaged GGUF the first time
        call = Call(request)
        try:
            return await asyncio.to_thread(worker.call, call)
        except asyncio.CancelledError:
            # a timeout (the Model wrapper's asyncio.timeout) or a cancelled run: stop the generation for real
            worker.abandon(call)
            raise

    async def aclose(self) -> None:
        """Workers are shared by every backend object for the same model; they end with the process."""


def _sampling(params: GenerateParams) -> dict[str, Any]:
    values = params.model_dump(exclude_none=True)
    values.setdefault("max_tokens", DEFAULT_MAX_TOKENS)  # llama-cpp's own default (16) cuts answers short
    allowed = {"temperature", "max_tokens", "seed", "stop", "top_p", "top_k", "min_p", "repeat_penalty"}
    return {k: v for k, v in values.items() if k in allowed}
