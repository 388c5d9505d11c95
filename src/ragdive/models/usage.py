"""Tokens and cost per role and model, prices, and the budget cap.

Cost is only ever computed from a known price. A model without one keeps its token counts and shows cost as
unknown (None) — never 0, which would read as "free". Cache hits spend nothing and are counted on their own.

Prices are US dollars per 1M tokens, from the maintained price library genai-prices for a provider's own endpoint
(no ``base_url``: the same model name behind another server may be priced differently). Local in-process models
(`llamacpp/...`) cost 0. Any model's price can be set in the config, which wins:

    models:
      judge:
        model: openai/gpt-4o-mini
        price: {input_per_1m: 0.15, output_per_1m: 0.60, cached_input_per_1m: 0.075}

Prompt tokens the provider says it served from its prompt cache are priced at its cached-input rate (the library's,
or ``cached_input_per_1m``); without one, at the input rate.
"""

from __future__ import annotations

import functools
from typing import Protocol

from ..config.models import BudgetConfig, ModelSpec, Prices
from ..errors import BudgetExceeded
from ..records import SPEND_COUNTS, ModelSpend, Usage

PRICED_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "gemini": "google", "mistral": "mistral"}
"""ragdive's provider (or LiteLLM's, after ``litellm/``) -> the price library's provider id."""


def price_for(spec: ModelSpec) -> Prices | None:
    """The price of a model binding: the config's ``price:`` override, else the maintained price library
    (genai-prices) for a provider's own endpoint, else unknown (None). A model behind another server
    (``base_url``) may be priced differently, so it has no price unless the config gives one. Local in-process
    models (``llamacpp/...``) cost 0."""
    if spec.prices is not None:
        return spec.prices
    provider, _, model = spec.model.partition("/")
    if provider == "llamacpp":
        return Prices(input_per_1m=0.0, output_per_1m=0.0)
    if provider == "litellm":
        provider, _, model = model.partition("/")
    if spec.base_url or provider not in PRICED_PROVIDERS or not model:
        return None
    return _library_price(PRICED_PROVIDERS[provider], model)


@functools.cache
def _library_price(provider: str, model: str) -> Prices | None:
    try:
        from genai_prices import Usage as PriceUsage
        from genai_prices import calc_price
    except ImportError:  # pragma: no cover - a dependency; without it every price is the config's or unknown
        return None
    try:
        inp = calc_price(PriceUsage(input_tokens=1_000_000, output_tokens=0), model_ref=model, provider_id=provider)
        out = calc_price(PriceUsage(input_tokens=0, output_tokens=1_000_000), model_ref=model, provider_id=provider)
        # the library's input_tokens include the cache reads: 1M read from the cache prices the cached rate
        cached = calc_price(
            PriceUsage(input_tokens=1_000_000, cache_read_tokens=1_000_000), model_ref=model, provider_id=provider
        )
    except LookupError:
        return None
    return Prices(
        input_per_1m=float(inp.total_price),
        output_per_1m=float(out.total_price),
        cached_input_per_1m=float(cached.total_price),
    )


def unpriced_under_budget(budget: BudgetConfig, specs: dict[str, ModelSpec]) -> str | None:
    """One line refusing a cost budget over a model with no price (the budget would silently never stop it),
    or None."""
    if budget.max_cost_usd is None:
        return None
    missing = [f"models.{role} ({spec.model})" for role, spec in specs.items() if price_for(spec) is None]
    if not missing:
        return None
    return (
        f"budget.max_cost_usd is set but {', '.join(missing)} {'has' if len(missing) == 1 else 'have'} no known "
        "price, so the budget could never stop it: give it one (price: {input_per_1m: ..., output_per_1m: ...}) "
        "or cap tokens with budget.max_tokens"
    )


def cost_of(usage: Usage, price: Prices | None) -> float | None:
    """The call's cost: prompt tokens at the input rate, those served from the provider's prompt cache (a subset
    of them) at its cached-input rate, completion tokens at the output rate; unknown without a price."""
    if price is None:
        return None
    cached = min(usage.provider_cached_tokens, usage.prompt_tokens)
    cached_rate = price.input_per_1m if price.cached_input_per_1m is None else price.cached_input_per_1m
    prompt = (usage.prompt_tokens - cached) * price.input_per_1m + cached * cached_rate
    return (prompt + usage.completion_tokens * price.output_per_1m) / 1_000_000


class _Tally:
    """One (role, model)'s running counts: plain slots, updated on every call (a pydantic record took ~1 us per
    field set, five per call); the ModelSpend records are made from it when a snapshot is asked for."""

    __slots__ = ("role", "model", *SPEND_COUNTS)

    def __init__(self, role: str, model: str) -> None:
        self.role, self.model = role, model
        self.calls = self.cached_calls = self.prompt_tokens = self.completion_tokens = 0
        self.provider_cached_tokens = self.retries = 0
        self.cost_usd: float | None = 0.0
        self.faults: dict[str, int] = {}

    def spend(self) -> ModelSpend:
        counts = {name: getattr(self, name) for name in SPEND_COUNTS}
        counts["faults"] = dict(self.faults)  # a copy: the tally goes on counting
        return ModelSpend(role=self.role, model=self.model, **counts)


class SpendSink(Protocol):
    """Where a ledger's lines go as they are counted: the run's spend journal (store.spend_journal), one line per
    request, fault or cache hit. A request and a hit come as their parts, not as a ModelSpend: building and encoding
    a record for each of a run's thousands of calls was measurable CPU (issue 27); the journal writes the same text."""

    def append(self, line: ModelSpend) -> None: ...

    def append_call(self, role: str, model: str, usage: Usage) -> None: ...

    def append_cached(self, role: str, model: str) -> None: ...


class UsageLedger:
    """Running totals, shared by every model of a run. Updated on the event loop (no awaits inside)."""

    def __init__(self) -> None:
        self._journal: SpendSink | None = None
        """Told every request's spend as it is counted (the run's spend journal: RunRecorder.attach)."""
        self._lines: dict[tuple[str, str], _Tally] = {}
        """Per (role, model): the running counts (``lines()`` makes the records the manifest keeps)."""
        self.known_cost_usd = 0.0
        """Sum of the costs that are known: what the cost budget is checked against."""
        self.total_tokens = 0

    def _line(self, role: str | None, model: str) -> _Tally:
        key = (role or "-", model)
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = _Tally(key[0], model)
        return line

    def journal_to(self, journal: SpendSink) -> None:
        self._journal = journal

    def record(self, role: str | None, model: str, usage: Usage) -> None:
        line = self._line(role, model)
        if self._journal is not None:
            self._journal.append_call(line.role, model, usage)
        line.calls += 1
        line.prompt_tokens += usage.prompt_tokens
        line.completion_tokens += usage.completion_tokens
        line.provider_cached_tokens += usage.provider_cached_tokens
        self.total_tokens += usage.prompt_tokens + usage.completion_tokens
        if usage.cost_usd is None:
            line.cost_usd = None
        else:
            self.known_cost_usd += usage.cost_usd
            if line.cost_usd is not None:
                line.cost_usd += usage.cost_usd

    def carry_over(self, spent: Usage) -> None:
        """Count what earlier sessions of the same run spent against the budget (a resumed run's cap covers the
        whole run). It is not attributed to a role or model: the earlier manifest holds that."""
        self.total_tokens += spent.prompt_tokens + spent.completion_tokens
        self.known_cost_usd += spent.cost_usd or 0.0

    def record_fault(self, role: str | None, model: str, kind: str, *, retried: bool, sent: bool = False) -> None:
        """A failed attempt; ``sent``: a request the model's server received and failed (an HTTP error, a timeout,
        an unreadable body), which counts as a call (a refused connection, or an unusable answer to a call already
        counted, does not)."""
        line = self._line(role, model)
        if self._journal is not None:
            self._journal.append(
                ModelSpend(role=line.role, model=model, calls=int(sent), retries=int(retried), faults={kind: 1})
            )
        line.calls += sent
        line.faults[kind] = line.faults.get(kind, 0) + 1
        line.retries += retried

    def record_cached(self, role: str | None, model: str, usage: Usage) -> None:
        line = self._line(role, model)
        if self._journal is not None:
            self._journal.append_cached(line.role, model)
        line.cached_calls += 1

    def lines(self) -> list[ModelSpend]:
        """Per (role, model), what was spent so far (new records: changing one changes nothing here)."""
        return [line.spend() for line in sorted(self._lines.values(), key=lambda line: (line.role, line.model))]

    def total(self) -> Usage:
        """Everything spent (cache hits excluded); cost None when any paid call's price was unknown."""
        total = Usage(cost_usd=0.0)
        for line in self._lines.values():
            if line.calls:
                total = total + _usage(line)
        return total

    def spend(self) -> list[ModelSpend]:
        """This ledger's lines as the run recorder takes them (a running snapshot; cache hits apart)."""
        return [line for line in self.lines() if line.calls or line.faults or line.cached_calls]

    def by_role(self) -> dict[str, Usage]:
        out: dict[str, Usage] = {}
        for line in self._lines.values():
            if line.calls:
                out[line.role] = out.get(line.role, Usage(cost_usd=0.0)) + _usage(line)
        return out


def _usage(line: _Tally) -> Usage:
    return Usage(prompt_tokens=line.prompt_tokens, completion_tokens=line.completion_tokens, cost_usd=line.cost_usd)


class Budget:
    """The run's cap, checked before every call: once reached, no new call starts (calls in flight finish)."""

    def __init__(self, config: BudgetConfig | None, ledger: UsageLedger) -> None:
        self.config = config or BudgetConfig()
        self.ledger = ledger

    def check(self, model: str) -> None:
        # The message names the cap, not the spend so far: calls in flight when the cap is reached still finish
        # and are recorded, so a figure taken here would sit beside a larger final cost on the same screen.
        cfg, ledger = self.config, self.ledger
        if cfg.max_cost_usd is not None and ledger.known_cost_usd >= cfg.max_cost_usd:
            raise BudgetExceeded(
                f"max_cost_usd ${cfg.max_cost_usd:.4f} reached; not calling {model}",
                model=model,
                provider=model.split("/", 1)[0],
            )
        if cfg.max_tokens is not None and ledger.total_tokens >= cfg.max_tokens:
            raise BudgetExceeded(
                f"max_tokens {cfg.max_tokens} reached; not calling {model}",
                model=model,
                provider=model.split("/", 1)[0],
            )
