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
