from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ragdive.config import ExperimentConfig
from ragdive.config.models import ModelSpec
from ragdive.models import Completion, CompletionCache, GenerateParams, Message, Model, ModelContext, ScriptedModel
from ragdive.models import cache as cache_module
from ragdive.models.cache import cache_key
from ragdive.models.structured import schema_text

from .conftest import Capital

MSGS = [Message(role="user", content="capital of France?")]
GOOD = '{"capital": "Paris", "population_millions": 2}'


def cached_model(tmp_path: Path, backend: ScriptedModel, **spec: object) -> Model:
    context = ModelContext(cache=CompletionCache(tmp_path / "cache"))
    return Model(backend, role="judge", spec=ModelSpec(model=backend.name, **spec), context=context)  # type: ignore[arg-type]


async def test_identical_call_is_served_from_cache_and_repeat_index_misses(tmp_path: Path) -> None:
    backend = ScriptedModel(responder=lambda messages: GOOD)
    model = cached_model(tmp_path, backend)
    first = await model.generate(MSGS, schema=Capital)
    second = await model.generate(MSGS, schema=Capital)
    assert len(backend.calls) == 1
    assert not first.cached and second.cached and second.parsed == first.parsed
    assert second.usage.prompt_tokens == 0 and second.usage.cost_usd == 0.0  # a hit spends nothing
    third = await model.generate(MSGS, schema=Capital, repeat_index=1)
    assert not third.cached and len(backend.calls) == 2
    assert model.context.cache is not None
    assert (model.context.cache.hits, model.context.cache.misses) == (1, 2)


async def test_key_covers_messages_schema_and_params(tmp_path: Path) -> None:
    backend = ScriptedModel(responder=lambda messages: GOOD)
    model = cached_model(tmp_path, backend)
    await model.generate(MSGS)
    await model.generate(MSGS, schema=Capital)
    await model.generate(MSGS, params=GenerateParams(temperature=0.5))
    await model.generate([Message(role="user", content="capital of Spain?")])
    assert len(backend.calls) == 4
    await model.generate(MSGS, params=GenerateParams(temperature=0.5))
    assert len(backend.calls) == 4


async def test_cache_persists_across_processes_and_stores_no_secret(tmp_path: Path) -> None:
    secret = "sk-very-secret-key-123"
    spec = {"api_key": secret, "base_url": "http://127.0.0.1:1/v1"}
    backend = ScriptedModel(responder=lambda messages: "answer one")
    first = cached_model(tmp_path, backend, **spec)
    await first.generate(MSGS)
    await first.settled()  # writes are committed in batches: on disk once settled (or closed)
    again = ScriptedModel(responder=lambda messages: "answer two")
    completion = await cached_model(tmp_path, again, **spec).generate(MSGS)  # a new cache object, same folder
    assert completion.text == "answer one" and completion.cached and again.calls == []
    for file in (tmp_path / "cache").iterdir():
        assert secret.encode() not in file.read_bytes()


def test_a_miss_costs_no_query_and_another_process_s_entries_are_seen_within_the_refresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Misses are answered from the keys known in memory; entries another connection commits are read in at most
    every KEYS_REFRESH_S (here: a clock moved by hand), and an entry this cache committed is a hit at once."""
    clock = [1000.0]
    monkeypatch.setattr(cache_module.time, "monotonic", lambda: clock[0])
    mine, other = CompletionCache(tmp_path), CompletionCache(tmp_path)
    answer = Completion(text="stored", model="m")
    try:
        assert mine.get("a" * 64) is None  # the first lookup reads the keys in (none yet)
        queries: list[str] = []
        mine._db.set_trace_callback(queries.append)
        assert mine.get("b" * 64) is None and queries == []  # a miss from memory
        mine.put("c" * 64, answer)
        mine.flush()  # committed: no longer pending, and still a hit without waiting for a refresh
        hit = mine.get("c" * 64)
        assert hit is not None and hit.text == "stored" and hit.cached
        other.put("d" * 64, answer)
        other.flush()
        assert mine.get("d" * 64) is None  # within KEYS_REFRESH_S of the last read: not seen yet (a miss, no error)
        clock[0] += cache_module.KEYS_REFRESH_S
        seen = mine.get("d" * 64)
        assert seen is not None and seen.text == "stored"
    finally:
        mine.close()
        other.close()


async def test_concurrent_use_from_many_tasks(tmp_path: Path) -> None:
    backend = ScriptedModel(responder=lambda messages: messages[-1].content.upper())
    model = cached_model(tmp_path, backend)
    prompts = [[Message(role="user", content=f"q{i % 10}")] for i in range(100)]
    results = await asyncio.gather(*(model.generate(p, repeat_index=0) for p in prompts))
    assert [r.text for r in results] == [f"Q{i % 10}" for i in range(100)]
    assert model.context.cache is not None and len(model.context.cache) == 10
    again = await asyncio.gather(*(model.generate(p) for p in prompts))
    assert all(r.cached for r in again)


async def test_a_cached_answer_that_no_longer_validates_is_refetched(tmp_path: Path) -> None:
    backend = ScriptedModel().enqueue(GOOD)
    model = cached_model(tmp_path, backend)
    assert model.context.cache is not None
    key = cache_key(
        model=model.name,
        base_url=None,
        messages=MSGS,
        schema=schema_text(Capital),
        params=GenerateParams(),
        repeat_index=0,
    )
    model.context.cache.put(key, Completion(text="not the schema", model=model.name))
    completion = await model.generate(MSGS, schema=Capital)
    assert not completion.cached and completion.parsed is not None and len(backend.calls) == 1
    assert (await model.generate(MSGS, schema=Capital)).cached  # the good answer replaced the bad one


def test_context_from_config_honours_no_cache_and_cache_dir(tmp_path: Path) -> None:
    config = ExperimentConfig.model_validate({"cache": {"dir": str(tmp_path / "from-config")}})
    assert ModelContext.from_config(config).cache is not None
    assert (tmp_path / "from-config" / "completions.sqlite3").exists()
    assert ModelContext.from_config(config, no_cache=True).cache is None
    ctx = ModelContext.from_config(config, cache_dir=tmp_path / "cli")
    assert ctx.cache is not None and ctx.cache.directory == tmp_path / "cli"
    off = ExperimentConfig.model_validate({"cache": {"enabled": False}})
    assert ModelContext.from_config(off).cache is None


def test_a_key_is_the_sha256_of_its_request_s_canonical_json_so_caches_written_before_still_answer() -> None:
    """Stored entries are found by this exact digest: a change of the key's bytes would turn every cache on disk
    into misses (and a cached re-run into paid calls). This pins the recipe, non-ASCII text and all."""
    import hashlib
    import json

    # parameters set and none, a first and a later repeat
    for params, repeat in ((GenerateParams(temperature=0.2, max_tokens=64), 2), (GenerateParams(), 0)):
        key = cache_key(
            model="openai/m",
            base_url=None,
            messages=[Message(role="user", content="Qu'est-ce que l'été ? ☃")],
            schema='{"type":"object"}',
            params=params,
            repeat_index=repeat,
        )
        payload = {
            "v": cache_module.SCHEMA_VERSION,
            "model": "openai/m",
            "base_url": "",
            "messages": [["user", "Qu'est-ce que l'été ? ☃"]],
            "schema": '{"type":"object"}',
            "params": params.model_dump(exclude_none=True),
            "repeat": repeat,
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        assert key == hashlib.sha256(blob.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("value", ["not json {", '{"model": "m"}', '{"text": null}', '["text"]', '"text"'])
async def test_a_damaged_entry_is_a_miss_and_the_answer_made_instead_replaces_it(tmp_path: Path, value: str) -> None:
    """A row that is not an entry as put writes them answers nothing (before: json.loads or the record raised
    out of the model call)."""
    import json
    import sqlite3

    backend = ScriptedModel(responder=lambda messages: "made again")
    model = cached_model(tmp_path, backend)
    params = GenerateParams(**model.spec.params)  # the model's own, as its calls send them
    key = cache_key(model=model.name, base_url=None, messages=MSGS, schema=None, params=params, repeat_index=0)
    db = sqlite3.connect(tmp_path / "cache" / cache_module.DB_NAME, isolation_level=None)
    db.execute("INSERT INTO completions (key, model, created, value) VALUES (?, ?, 0, ?)", (key, model.name, value))
    completion = await model.generate(MSGS)
    assert not completion.cached and completion.text == "made again" and len(backend.calls) == 1
    await model.settled()
    (stored,) = db.execute("SELECT value FROM completions WHERE key = ?", (key,)).fetchone()
    db.close()
    assert json.loads(stored)["text"] == "made again"  # the damaged row was this call's, and is replaced
    assert (await model.generate(MSGS)).cached and len(backend.calls) == 1


def test_a_hit_is_the_stored_answer(tmp_path: Path) -> None:
    cache = CompletionCache(tmp_path)
    stored = Completion(text="Paris ☃", model="openai/m", finish_reason="stop")
    stored.usage.prompt_tokens, stored.usage.completion_tokens = 12, 3
    cache.put("k" * 64, stored)
    cache.flush()
    again = CompletionCache(tmp_path).get("k" * 64)  # read from the database, not from the pending entries
    assert again is not None
    assert again.model_dump() == {**stored.model_dump(), "cached": True}


@pytest.mark.parametrize(
    "spec_params", [{}, {"temperature": 0.2, "max_tokens": 64}, {"top_p": 1e-05, "stop": ["\n", "é"]}]
)
async def test_a_models_calls_are_stored_under_the_keys_made_from_scratch(
    tmp_path: Path, spec_params: dict[str, object]
) -> None:
    """A model writes its own parameters' part of the key once (not per call): its entries are where the recipe
    puts them, for its own parameters, parameters given to the call, and every repeat."""
    import hashlib
    import json

    backend = ScriptedModel(responder=lambda messages: GOOD)
    model = cached_model(tmp_path, backend, params=spec_params)
    given = GenerateParams(temperature=0.7)
    calls = [(None, None), (None, 3), (given, None)]
    for params, repeat in calls:
        await model.generate(MSGS, schema=Capital, params=params, repeat_index=repeat)
    assert model.context.cache is not None
    for params, repeat in calls:
        merged = GenerateParams(
            **{"temperature": 0.0, **spec_params, **(params.model_dump(exclude_none=True) if params else {})}
        )
        payload = {
            "v": cache_module.SCHEMA_VERSION,
            "model": model.name,
            "base_url": "",
            "messages": [[m.role, m.content] for m in MSGS],
            "schema": schema_text(Capital),
            "params": merged.model_dump(exclude_none=True),
            "repeat": repeat or 0,
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        assert model.context.cache.get(hashlib.sha256(text.encode("utf-8")).hexdigest()) is not None
