"""The judge: renders a prompt file, asks the `judge` model for a structured answer, and turns every failure into
a JudgeError that metrics record as *unscored* (never 0).

A judge model with the `base` prompt profile gets ``prompts/base/<name>.md`` instead: a completion-style
transcript with one worked example, and the metric's schema bounded (short reasons, few items, every field
written; see models/profiles.py), so a base model's grammar-constrained answer is short and never cut off."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from pydantic import BaseModel

from .. import prompt_files
from ..errors import BudgetExceeded, JudgeError, ModelError, ModelOutputError, ModelStopped
from ..models import Message, Model
from ..models.profiles import LIST_ITEMS, bounded_schema
from ..models.prompting import transcript_messages
from ..records import Usage

T = TypeVar("T", bound=BaseModel)

SYSTEM = (
    "You are a careful, strict evaluator of a retrieval-augmented question answering system. "
    "Judge only from the material you are given, never from your own knowledge. "
    "Answer with JSON that matches the requested schema exactly."
)


def render_prompt(name: str, **variables: Any) -> str:
    """``evaluation/prompts/<name>.md`` (a base-profile one is ``base/<name>``), through the one prompt loader; a
    plug-in metric's own prompt is ``"package:name"`` (the file ``prompts/<name>.md`` inside that package)."""
    package, _, stem = name.rpartition(":")
    return prompt_files.render_prompt(package or "ragdive.evaluation", stem, **variables) + "\n"


class Judge:
    """Wraps the `judge` model. ``concurrency`` bounds the judge calls in flight across all metrics."""

    def __init__(self, model: Model, *, concurrency: int = 4) -> None:
        self.model = model
        self.concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        self.calls = 0
        """Judge calls made (successful or not): the benchmark counts these."""
        self.failures = 0
        """Calls that ended in a JudgeError."""
        self.usage: Usage | None = Usage(cost_usd=0.0)
        """Tokens (and cost; None once any call's price is unknown) of every call, unusable answers included."""

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def local_models(self) -> list[Model]:
        return [self.model]

    async def aclose(self) -> None:
        await self.model.aclose()

    def _spend(self, usage: Usage) -> None:
        self.usage = usage if self.usage is None else self.usage + usage

    @property
    def base(self) -> bool:
        return self.model.prompt_profile == "base"

    def messages(self, prompt: str, **variables: Any) -> list[Message]:
        """What the judge model is sent for ``prompt`` in its prompt profile."""
        if self.base:
            package, _, stem = prompt.rpartition(":")  # a plug-in's prompt: its base/ variant, when it ships one
            base = f"{package}:base/{stem}" if package else f"base/{stem}"
            if package and not prompt_files.has_prompt(package, f"base/{stem}"):
                base = prompt
            return transcript_messages(render_prompt(base, **variables))
        return [
            Message(role="system", content=SYSTEM),
            Message(role="user", content=render_prompt(prompt, **variables)),
        ]

    def schema_for(self, schema: type[T], list_items: int | None = None) -> type[T]:
        """The schema the model is asked for: bounded in the base profile (``list_items`` when the answer must
        have exactly that many items, e.g. one verdict per retrieved context)."""
        if not self.base:
            return schema
        if list_items is not None:
            return bounded_schema(schema, list_items=list_items, exact=True)  # type: ignore[return-value]
        return bounded_schema(schema, list_items=LIST_ITEMS)  # type: ignore[return-value]

    async def ask(self, prompt: str, schema: type[T], *, list_items: int | None = None, **variables: Any) -> T:
        """Render ``prompt`` with ``variables``, ask for ``schema``. Raises JudgeError (with the model's reason and
        the start of its raw output) when the model layer gives up."""
        messages = self.messages(prompt, **variables)
        async with self._slots:
            self.calls += 1
            try:
                completion = await self.model.generate(messages, schema=self.schema_for(schema, list_items))
            except (BudgetExceeded, ModelStopped):
                raise  # budget spent or the judge cannot answer at all: stop, do not mark every item unscored
            except ModelOutputError as exc:
                self.failures += 1
                if isinstance(exc.usage, Usage):  # the unusable answers were paid for: count them
                    self._spend(exc.usage)
                raw = (exc.raw or "").strip().replace("\n", " ")
                raise JudgeError(
                    f"judge output unusable ({_first_line(exc)}); raw: {raw[:200]!r}", kind="judge_unusable"
                ) from exc
            except ModelError as exc:
                self.failures += 1
                raise JudgeError(f"judge call failed: {_first_line(exc)}") from exc
        self._spend(completion.usage)
        parsed = completion.parsed
        if not isinstance(parsed, schema):  # a backend that ignored the schema: treat like garbage
            self.failures += 1
            raise JudgeError(
                f"judge returned {type(parsed).__name__}, expected {schema.__name__}", kind="judge_unusable"
            )
        return parsed


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]
