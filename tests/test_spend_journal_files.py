"""The spend journal keeps its file open between lines (an open and a close per request cost more than the
write), only for the journals written last: a process writing many runs (a sweep, a test suite) holds a bounded
number of files, and a journal whose file was closed opens it again at its next line."""

from __future__ import annotations

from pathlib import Path

from ragdive.records import ModelSpend
from ragdive.store import spend_journal
from ragdive.store.spend_journal import OPEN_JOURNALS, journal_for, read_journal


def test_lines_land_in_each_run_and_only_the_last_journals_stay_open(tmp_path: Path) -> None:
    runs = [tmp_path / f"run{i}" for i in range(OPEN_JOURNALS + 3)]
    for round_ in range(2):
        for i, run in enumerate(runs):
            run.mkdir(exist_ok=True)
            journal, _ = journal_for(run)
            journal.append(ModelSpend(role="judge", model="m/x", calls=1, prompt_tokens=10 * i + round_))
            open_now = [j for j in spend_journal._open_fds if j._fd is not None]
            assert len(open_now) <= OPEN_JOURNALS
    for i, run in enumerate(runs):
        (lines,) = read_journal(run).values()
        assert [line.prompt_tokens for line in lines] == [10 * i, 10 * i + 1]  # whole lines, in order, none lost
        assert journal_for(run)[0].counts == {("judge", "m/x"): 2}


def test_the_counted_fields_are_every_field_of_a_spend_record_but_its_names_and_journal_count() -> None:
    """The ledger's tallies and the journal's lines both take their fields from SPEND_COUNTS: a count added to
    ModelSpend and not there would be neither kept running nor journaled."""
    from ragdive.records import SPEND_COUNTS, ModelSpend

    fields = [f for f in ModelSpend.model_fields if f not in ("role", "model", "journal_lines")]
    assert list(SPEND_COUNTS) == fields


def test_a_requests_line_made_from_its_usage_is_the_line_of_its_spend_record(tmp_path: Path) -> None:
    """UsageLedger.record hands the journal (role, model, usage), not a ModelSpend: the text written is the same as
    for the record, for every kind of value (no tokens, cached tokens, unknown, zero and tiny costs)."""
    import random

    from ragdive.models.usage import UsageLedger
    from ragdive.records import Usage

    rng = random.Random(7)
    costs = [None, 0.0, -0.0, 1e-05, 0.000123, 2.5, 1e16, 0.1 + 0.2]
    usages = [
        Usage(
            prompt_tokens=rng.choice([0, 1, 12, 10**12]),
            completion_tokens=rng.choice([0, 3, 999]),
            cost_usd=rng.choice(costs),
            provider_cached_tokens=rng.choice([0, 0, 7]),
        )
        for _ in range(300)
    ]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    by_record, _ = journal_for(tmp_path / "a")
    by_usage, _ = journal_for(tmp_path / "b")
    ledger = UsageLedger()
    ledger.journal_to(by_usage)
    for usage in usages:
        ledger.record("judge", "openai/stub-é", usage)
        by_record.append(
            ModelSpend(
                role="judge",
                model="openai/stub-é",
                calls=1,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cost_usd=usage.cost_usd,
                provider_cached_tokens=usage.provider_cached_tokens,
            )
        )
    written = (tmp_path / "b" / spend_journal.SPEND).read_bytes()
    assert written == (tmp_path / "a" / spend_journal.SPEND).read_bytes()
    assert (
        len(written.splitlines()) == 300 and b'"cost_usd":null' in written and b'"cost_usd":0.00001' in written
    )  # line_json's spelling of 1e-05
    assert by_usage.counts == by_record.counts == {("judge", "openai/stub-é"): 300}
    assert ledger.lines()[0].calls == 300


async def test_a_cache_hit_s_line_is_the_text_of_its_record_and_a_run_s_recorder_takes_it(tmp_path: Path) -> None:
    """Hits go to the journal as a (role, model) pair, their line's text made once (a cached re-run has thousands):
    the same line as the record path writes, so readers and the kill recovery see no difference."""
    from ragdive.models import CompletionCache, Message, Model, ModelContext, ScriptedModel
    from ragdive.store import RunRecorder, RunStore

    by_record, by_pair = tmp_path / "a", tmp_path / "b"
    by_record.mkdir()
    by_pair.mkdir()
    journal_for(by_record)[0].append(ModelSpend(role="judge", model="m/ü", cached_calls=1))
    for _ in range(2):
        journal_for(by_pair)[0].append_cached("judge", "m/ü")
    first_line = (by_pair / spend_journal.SPEND).read_bytes().splitlines(keepends=True)[0]
    assert first_line == (by_record / spend_journal.SPEND).read_bytes()
    assert journal_for(by_pair)[0].counts == {("judge", "m/ü"): 2}

    store = RunStore.create(tmp_path / "runs")
    context = ModelContext(cache=CompletionCache(tmp_path / "cache"))
    RunRecorder(store).attach(context.ledger)
    model = Model(ScriptedModel().enqueue("an answer"), role="judge", context=context)
    messages = [Message(role="user", content="q")]
    await model.generate(messages)
    hit = await model.generate(messages)
    assert hit.cached and hit.text == "an answer" and hit.usage.cost_usd == 0.0 and hit.model == model.name
    lines = read_journal(store.path)[("judge", model.name)]
    assert [(line.calls, line.cached_calls) for line in lines] == [(1, 0), (0, 1)]
