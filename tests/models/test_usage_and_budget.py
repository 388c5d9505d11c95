from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ragdive.config import ExperimentConfig, ModelsConfig
from ragdive.config.models import BudgetConfig, ModelSpec
from ragdive.errors import BudgetExceeded
from ragdive.models import (
    Completion,
    CompletionCache,
    Message,
    Model,
    ModelContext,
    ScriptedModel,
    models_for_roles,
    price_for,
)
from ragdive.records import Usage

MSGS = [Message(role="user", content="hello")]


def answer(prompt: int, completion: int) -> Completion:
    return Completion(text="ok", usage=Usage(prompt_tokens=prompt, completion_tokens=completion))


def test_prices_builtin_override_and_unknown() -> None:
    official = price_for(ModelSpec(model="openai/gpt-4o-mini"))
    assert official is not None and (official.input_per_1m, official.output_per_1m) == (0.15, 0.60)
    # the same name behind another server is not assumed to cost the same
    assert price_for(ModelSpec(model="openai/gpt-4o-mini", base_url="http://127.0.0.1:8000/v1")) is None
    assert price_for(ModelSpec(model="openai/some-new-model")) is None
    local = price_for(ModelSpec(model="llamacpp/default"))
    assert local is not None and local.input_per_1m == 0
    custom = ModelSpec.model_validate({"model": "scripted/x", "prices": {"input_per_1m": 1, "output_per_1m": 2}})
    assert price_for(custom) == custom.prices


async def test_cost_from_a_known_price_and_unknown_stays_none() -> None:
    context = ModelContext()
    priced = ModelSpec.model_validate({"model": "scripted/p", "prices": {"input_per_1m": 2, "output_per_1m": 10}})
    paid = Model(ScriptedModel("scripted/p").enqueue(answer(1_000, 100)), role="judge", spec=priced, context=context)
    completion = await paid.generate(MSGS)
    assert completion.usage.cost_usd == pytest.approx(0.003)  # 1000*2/1e6 + 100*10/1e6
    unpriced = Model(ScriptedModel("scripted/u").enqueue(answer(50, 5)), role="user", context=context)
    assert (await unpriced.generate(MSGS)).usage.cost_usd is None
    by_role = context.ledger.by_role()
    judge = by_role["judge"]
    assert (judge.prompt_tokens, judge.completion_tokens, judge.cost_usd) == (1000, 100, pytest.approx(0.003))
    assert by_role["user"] == Usage(prompt_tokens=50, completion_tokens=5, cost_usd=None)
    total = context.ledger.total()
    assert (total.prompt_tokens, total.completion_tokens, total.cost_usd) == (1050, 105, None)  # unknown, not 0


async def test_cache_hits_are_free_and_counted_apart(tmp_path: Path) -> None:
    context = ModelContext(cache=CompletionCache(tmp_path))
    model = Model(ScriptedModel().enqueue(answer(10, 3)), role="judge", context=context)
    await model.generate(MSGS)
    await model.generate(MSGS)
    (line,) = context.ledger.lines()
    assert (line.calls, line.prompt_tokens, line.cached_calls) == (1, 10, 1)  # the hit: counted apart, not spent
    assert context.ledger.total().prompt_tokens == 10


async def test_budget_stops_new_calls_once_reached() -> None:
    context = ModelContext(budget=BudgetConfig(max_tokens=100))
    backend = ScriptedModel().enqueue(answer(60, 0), answer(60, 0), answer(1, 1))
    model = Model(backend, role="user", context=context)
    await model.generate(MSGS)
    await model.generate(MSGS)  # 60 < 100: allowed, and it brings the total to 120
    with pytest.raises(BudgetExceeded, match="max_tokens 100 reached; not calling scripted/test"):
        await model.generate(MSGS)
    assert len(backend.calls) == 2


async def test_calls_waiting_for_a_slot_when_the_budget_is_reached_send_nothing() -> None:
    """One slot, five calls at once, 60 tokens each against a cap of 100: the second brings the total to 120, so the
    three that waited behind it must not be sent once they get the slot (the budget is checked again with the slot
    in hand, not only before waiting: "once reached, no new call starts")."""

    async def slow_answer(messages: list[Message]) -> Completion:
        await asyncio.sleep(0.01)  # the slot is held while this waits: the other calls queue for it
        return answer(60, 0)

    context = ModelContext(budget=BudgetConfig(max_tokens=100))
    backend = ScriptedModel(responder=slow_answer)
    model = Model(backend, role="user", spec=ModelSpec(model="scripted/test", max_concurrency=1), context=context)
    outcomes = await asyncio.gather(*(model.generate(MSGS) for _ in range(5)), return_exceptions=True)
    assert [type(o).__name__ for o in outcomes] == ["Completion"] * 2 + ["BudgetExceeded"] * 3
    assert len(backend.calls) == 2 and context.ledger.total_tokens == 120


async def test_cost_budget_counts_known_costs() -> None:
    spec = ModelSpec.model_validate({"model": "scripted/p", "prices": {"input_per_1m": 1000, "output_per_1m": 0}})
    context = ModelContext(budget=BudgetConfig(max_cost_usd=0.5))
    backend = ScriptedModel("scripted/p").enqueue(answer(600, 0), answer(1, 0))
    model = Model(backend, spec=spec, context=context)
    await model.generate(MSGS)  # $0.60
    assert context.ledger.known_cost_usd == pytest.approx(0.6)
    with pytest.raises(BudgetExceeded, match=r"max_cost_usd \$0.5000 reached; not calling scripted/p"):
        await model.generate(MSGS)


async def test_models_for_roles_share_one_context(tmp_path: Path) -> None:
    config = ExperimentConfig.model_validate(
        {
            "models": {"default": "scripted/all", "judge": "scripted/judge"},
            "cache": {"dir": str(tmp_path)},
            "budget": {"max_tokens": 1000},
        }
    )
    context = ModelContext.from_config(config)
    bound = models_for_roles(config.models, ["user", "validator", "judge"], context=context)
    assert all(m.context is context for m in bound.values())
    assert bound["user"].backend is not bound["validator"].backend  # each role keeps its own scripted queue
    assert bound["user"].limiter is bound["validator"].limiter  # same model and endpoint: one limit
    for role, model in bound.items():
        assert isinstance(model.backend, ScriptedModel)
        model.backend.enqueue(answer(7, 1))
        await model.generate([Message(role="user", content=role)])
    assert set(context.ledger.by_role()) == {"user", "validator", "judge"}
    assert context.ledger.total().prompt_tokens == 21
    # the two positional parameters still work on their own
    plain = models_for_roles(ModelsConfig(default="scripted/x"), ["judge"])  # type: ignore[arg-type]
    assert plain["judge"].context.cache is None
