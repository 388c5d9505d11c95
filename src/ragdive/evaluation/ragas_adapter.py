"""Optional `ragas` engine: the four single-turn metrics computed by the Ragas library, for comparability with
published Ragas numbers. Install with the `ragas` extra; imported lazily.

How it differs from ragdive's own metrics (see README, "Evaluating"):
- Ragas makes more judge calls: faithfulness 2, context precision one per context (k), context recall 1,
  answer correctness 3 — 16 per turn at k=10 against ragdive's 4.
- Ragas's answer correctness is a factual F1 (TP/FP/FN statements), not a binary verdict; we run it with
  weights [1, 0] (no embedding similarity), so no embeddings endpoint is needed.
- Ragas talks to the judge endpoint itself (the judge's `base_url`, OpenAI-compatible), so its calls bypass
  ragdive's model layer: no cache, no usage ledger. This is the one exception to "only models/ talks to LLMs".
- The unscored policy is ours: the same prechecks apply; an exception or NaN from Ragas becomes unscored.
"""

from __future__ import annotations

import asyncio
import importlib
import math
import os
from collections.abc import Callable
from typing import Any, ClassVar

from ..config import ModelsConfig
from ..errors import ConfigError
from ..models import Model
from ..records import Turn, Usage
from .evaluator import Evaluator
from .judging import JudgeProtocol
from .metrics import ConversationMetric, TurnMetric, configured_metrics, metric_info
from .metrics.base import Outcome, Unscorable

PREFIX = "ragas_"


def import_ragas() -> Any:
    # Ragas sends usage telemetry to its vendor by default; ragdive never phones home on a user's behalf
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    try:
        import ragas.llms
        import ragas.metrics.collections as collections
    except ImportError as exc:
        raise ConfigError(
            f"evaluation.engine 'ragas' needs the Ragas library: pip install 'ragdive[ragas]' ({exc})"
        ) from exc
    return ragas.llms, collections


class RagasJudge:
    """Holds the Ragas LLM, bounds and counts the calls made through it (one `ascore` may make several).
    Implements the judge protocol: its usage is None (Ragas's calls bypass the model layer, so tokens are unknown,
    never counted as zero) and it has no local model to self-check."""

    usage: Usage | None = None
    local_models: ClassVar[list[Model]] = []

    def __init__(self, name: str, base_url: str, api_key: str, concurrency: int) -> None:
        llms, self.collections = import_ragas()
        import httpx
        from openai import AsyncOpenAI

        self.name = name
        self.calls = 0
        """HTTP requests Ragas sent to the judge endpoint (counted on the wire, not per metric)."""
        self.failures = 0

        async def count(request: httpx.Request) -> None:
            self.calls += 1

        # openai 3.x types http_client as its own httpx fork; at runtime it accepts an httpx client, whose request
        # hook is how Ragas's calls are counted on the wire
        self.client = AsyncOpenAI(
            base_url=base_url,
            api_key=api_key,
            http_client=httpx.AsyncClient(event_hooks={"request": [count]}),  # type: ignore[arg-type]
        )
        self.llm = llms.llm_factory(name.split("/", 1)[1], client=self.client)
        self._slots = asyncio.Semaphore(concurrency)

    async def run(self, make: Callable[[], Any]) -> Any:
        """Bounds metric evaluations in flight (each may make several calls)."""
        async with self._slots:
            return await make()

    async def aclose(self) -> None:
        await self.client.close()


# Our metric name -> the Ragas metric computing it. A registered metric missing here is left out with a note.
RAGAS_METRICS: dict[str, Callable[[Any, Any], Any]] = {
    "faithfulness": lambda c, llm: c.Faithfulness(llm=llm),
    "context_precision": lambda c, llm: c.ContextPrecisionWithReference(llm=llm),
    "context_recall": lambda c, llm: c.ContextRecall(llm=llm),
    "correctness": lambda c, llm: c.AnswerCorrectness(llm=llm, weights=[1.0, 0.0]),
}


class RagasMetric(TurnMetric["RagasJudge"]):
    """One of our metric names, computed by the corresponding Ragas metric: a subclass per metric (see
    `ragas_metric`) carries our metric's name with the prefix and its prechecks, so the unscored rules are ours."""

    base: ClassVar[str]

    def __init__(self, judge: RagasJudge) -> None:
        self.metric = RAGAS_METRICS[self.base](judge.collections, judge.llm)

    def identity(self) -> dict[str, Any]:
        # the verdict is Ragas's, so the fingerprint names Ragas and its version, not our prompt files
        version = getattr(importlib.import_module("ragas"), "__version__", "unknown")
        return {"metric": self.name, "metric_version": metric_info(self.base).version,
                "prompt_fingerprint": f"ragas-{version}"}  # fmt: skip

    def _inputs(self, turn: Turn) -> dict[str, Any]:
        contexts = [ctx.text for ctx in turn.contexts]
        q, gt, answer = turn.standalone_question, turn.ground_truth, turn.answer or ""
        inputs: dict[str, dict[str, Any]] = {
            "faithfulness": {"user_input": q, "response": answer, "retrieved_contexts": contexts},
            "context_precision": {"user_input": q, "reference": gt, "retrieved_contexts": contexts},
            "context_recall": {"user_input": q, "retrieved_contexts": contexts, "reference": gt},
            "correctness": {"user_input": q, "response": answer, "reference": gt},
        }
        return inputs[self.base]

    async def measure(self, judge: RagasJudge, turn: Turn) -> Outcome:
        try:
            result = await judge.run(lambda: self.metric.ascore(**self._inputs(turn)))
        except Exception as exc:  # Ragas raises whatever its stack raises; all of it is a failed judgement
            judge.failures += 1
            raise Unscorable(
                f"ragas failed: {type(exc).__name__}: {exc}", judge_failed=True, kind="judge_failed"
            ) from exc
        value = float(result.value)
        if math.isnan(value):
            raise Unscorable(
                "ragas returned NaN (nothing to measure, or an unusable judge answer)", kind="judge_unusable"
            )
        return Outcome(value, getattr(result, "reason", None) or "", {"engine": "ragas"})


def ragas_metric(base: str) -> type[RagasMetric]:
    ours = metric_info(base).cls
    attributes = {
        "base": base,
        "name": PREFIX + base,
        **{
            rule: getattr(ours, rule)
            for rule in ("needs_answer", "needs_contexts", "needs_answerable", "needs_ground_truth")
        },
    }
    return type(f"Ragas{ours.__name__}", (RagasMetric,), attributes)


class RagasEvaluator(Evaluator):
    """The evaluator with Ragas's metrics in place of ours; everything else (resume, unscored, totals) is shared."""

    def __init__(self, judge: RagasJudge, metrics: list[str] | None) -> None:
        self.ragas_judge = judge
        super().__init__(judge, metrics)

    def build_metrics(self, names: list[str] | None) -> tuple[list[TurnMetric], list[ConversationMetric]]:
        names = configured_metrics(names)
        dropped = [m for m in names if m not in RAGAS_METRICS]
        if dropped:
            self.notes.append(f"ragas engine: {', '.join(dropped)} not computed (ragdive engine only)")
        return [ragas_metric(m)(self.ragas_judge) for m in names if m in RAGAS_METRICS], []

    @classmethod
    def from_models(cls, models: ModelsConfig, metrics: list[str] | None, concurrency: int) -> Evaluator:
        spec = models.for_role("judge")
        if spec is None or spec.provider != "openai" or not spec.base_url:
            raise ConfigError(
                "the ragas engine needs an OpenAI-compatible judge: models.judge with openai/<model> and base_url"
            )
        key = spec.api_key or (os.environ.get(spec.api_key_env) if spec.api_key_env else None) or "none"
        return cls(RagasJudge(spec.model, spec.base_url, key, concurrency), metrics)


_: type[JudgeProtocol] = RagasJudge  # the protocol is what the evaluator relies on: checked by mypy here
