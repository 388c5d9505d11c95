"""`llamacpp/<path.gguf>` and `llamacpp/default`: a GGUF model in-process through llama-cpp-python.

`default` is the packaged Gemma-3-270M (a *base* model: good for plumbing and the offline demo, not a judge of
quality). Weights are loaded once per process per (path, n_ctx) and shared by every backend object. One llama
context is not thread-safe, so calls run off the event loop (asyncio.to_thread) one at a time behind a lock.

Messages are rendered as a plain transcript (see prompting.py: measured better than the fallback chat template
for the base model); ``options.chat_template: true`` uses the model's chat template instead. Structured output
uses a grammar compiled from the JSON schema, so the text is always syntactically valid JSON of that shape.
A timed-out call cannot be interrupted inside llama.cpp: it finishes in its thread and the next call waits.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ...errors import ConfigError
from ...records import Usage
from ..base import Completion, GenerateParams, Message, ModelBackend
from ..local_files import default_gguf
from ..prompting import TURN_STOP, render_transcript
from ..structured import schema_text

DEFAULT_MAX_TOKENS = 512

_load_lock = threading.Lock()
_loaded: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}
_grammars: dict[str, Any] = {}


def _llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ConfigError("the llamacpp backend needs llama-cpp-python: pip install 'ragdive[local]'") from exc
    return llama_cpp


def load_model(path: Path, n_ctx: int, n_threads: int | None = None) -> tuple[Any, threading.Lock]:
    """The process-wide llama for ``path`` and the lock that serialises its calls."""
    key = (str(path), n_ctx)
    with _load_lock:
        if key not in _loaded:
            llama_cpp = _llama_cpp()
            try:
                llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"llama.cpp cannot load {path}: {exc}") from exc
            _loaded[key] = (llm, threading.Lock())
        return _loaded[key]


class LlamaCppBackend(ModelBackend):
    provider = "llamacpp"

    def __init__(
        self,
        name: str,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        chat_template: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(name, **options)
        target = name.split("/", 1)[1]
        _llama_cpp()  # fail now, with the install hint, rather than at the first call
        if target == "default":
            self.path = None  # assembled lazily: building a model object must stay cheap
        else:
            self.path = Path(target).expanduser()
            if not self.path.is_file():
                raise ConfigError(f"{name}: no GGUF file at {self.path}")
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.chat_template = chat_template

    async def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: GenerateParams | None = None,
    ) -> Completion:
        return await asyncio.to_thread(self._generate, messages, schema, params or GenerateParams())

    def _generate(self, messages: list[Message], schema: type[BaseModel] | None, params: GenerateParams) -> Completion:
        path = self.path or default_gguf()
        llm, lock = load_model(path, self.n_ctx, self.n_threads)
        kwargs = _sampling(params)
        grammar = _grammar(schema) if schema is not None else None
        with lock:
            if self.chat_template:
                out = llm.create_chat_completion(
                    messages=[{"role": m.role, "content": m.content} for m in messages], grammar=grammar, **kwargs
                )
                choice = out["choices"][0]
                text = choice["message"].get("content") or ""
            else:
                stop = list(kwargs.pop("stop", None) or [])
                if schema is None:
                    stop.append(TURN_STOP)  # a base model happily writes the user's next turn too
                out = llm.create_completion(render_transcript(messages), grammar=grammar, stop=stop, **kwargs)
                choice = out["choices"][0]
                text = choice["text"]
        usage = out.get("usage") or {}
        return Completion(
            text=text.strip(),
            model=self.name,
            finish_reason=choice.get("finish_reason"),
            usage=Usage(
                prompt_tokens=usage.get("prompt_tokens", 0), completion_tokens=usage.get("completion_tokens", 0)
            ),
        )


def _sampling(params: GenerateParams) -> dict[str, Any]:
    values = params.model_dump(exclude_none=True)
    values.setdefault("max_tokens", DEFAULT_MAX_TOKENS)  # llama-cpp's own default (16) cuts answers short
    allowed = {"temperature", "max_tokens", "seed", "stop", "top_p", "top_k", "min_p", "repeat_penalty"}
    return {k: v for k, v in values.items() if k in allowed}


def _grammar(schema: type[BaseModel]) -> Any:
    """The grammar for a schema, compiled once per process."""
    text = schema_text(schema)
    with _load_lock:
        grammar = _grammars.get(text)
        if grammar is None:
            grammar = _grammars[text] = _llama_cpp().LlamaGrammar.from_json_schema(text, verbose=False)
    return grammar
