"""What the models of one run share: the cache, the usage ledger, the budget and the per-endpoint limiters."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ..config.models import BudgetConfig, CacheConfig, ModelSpec
from ..records import ModelLimit
from .cache import CompletionCache
from .health import ModelHealth
from .limits import Limiter
from .usage import Budget, UsageLedger


class _HasCacheAndBudget(Protocol):
    cache: CacheConfig
    budget: BudgetConfig


class ModelContext:
    """Build one per run and pass it to `models_for_roles(..., context=...)`.

    Without a cache (the default) every call reaches its model; without a budget nothing is capped.
    """

    def __init__(
        self,
        *,
        cache: CompletionCache | None = None,
        ledger: UsageLedger | None = None,
        budget: BudgetConfig | None = None,
        repeat_index: int = 0,
    ) -> None:
        self.cache = cache
        self.repeat_index = repeat_index
        """The run's repeat (ExperimentConfig.repeat): part of every cache key, so repeats are new samples."""
        self.ledger = ledger or UsageLedger()
        self.budget = Budget(budget, self.ledger)
        self._limiters: dict[tuple[str, str], Limiter] = {}
        self._health: dict[tuple[str | None, str, str], ModelHealth] = {}
        self._owns_cache = True

    @classmethod
    def from_config(
        cls, config: _HasCacheAndBudget, *, no_cache: bool = False, cache_dir: str | Path | None = None
    ) -> ModelContext:
        """From an ExperimentConfig (its `cache` and `budget` sections) and the CLI's --no-cache/--cache-dir."""
        cache = None
        if config.cache.enabled and not no_cache:
            cache = CompletionCache(cache_dir or config.cache.dir)
        return cls(cache=cache, budget=config.budget, repeat_index=getattr(config, "repeat", 0))

    def limiter_for(self, spec: ModelSpec) -> Limiter:
        """Shared by every role bound to the same model on the same endpoint; the first binding's limits win."""
        key = (spec.model, spec.base_url or "")
        limiter = self._limiters.get(key)
        if limiter is None:
            limiter = self._limiters[key] = Limiter(spec.max_concurrency, spec.requests_per_minute)
        return limiter

    def health_for(self, role: str | None, spec: ModelSpec, backend_env: str | None) -> ModelHealth:
        """The stop rule of one role's model (per role: a judge refused is not the user model refused)."""
        key = (role, spec.model, spec.base_url or "")
        health = self._health.get(key)
        if health is None:
            health = self._health[key] = ModelHealth(role, spec, backend_env)
        return health

    def limits(self) -> list[ModelLimit]:
        """The adaptive limits that backed off this session (for the manifest, via the run recorder)."""
        out = []
        for (model, _), limiter in sorted(self._limiters.items()):
            state = limiter.snapshot()
            if state.backoffs:
                out.append(
                    ModelLimit(
                        model=model,
                        max_concurrency=state.max_concurrency,
                        limit=state.limit,
                        lowest=state.lowest,
                        backoffs=state.backoffs,
                    )
                )
        return out

    def for_run(self, config: _HasCacheAndBudget) -> ModelContext:
        """A context for one run of a sweep: this context's cache and per-endpoint limiters (cells that call the
        same endpoint share its capacity, not each their own), the run's own repeat, budget and usage ledger (each
        run's manifest records what it spent). Closing it leaves the shared cache open for the other runs."""
        child = ModelContext(cache=self.cache, budget=config.budget, repeat_index=getattr(config, "repeat", 0))
        child._limiters = self._limiters
        child._owns_cache = False
        return child

    def close(self) -> None:
        if self.cache is not None and self._owns_cache:
            self.cache.close()
