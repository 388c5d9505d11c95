"""ragdive annotate: sheets out (stratified, seeded, with excerpts and yes/no validation), ratings in (all bad
cells reported, nothing half-imported, re-import does not double), and the summary's Table 1 and kappa."""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.interop import sample_turns
from ragdive.store import ANNOTATIONS
from tests.annotate_runs import RUN_ID, fill_xlsx, scripted_run

openpyxl = pytest.importorskip("openpyxl", reason="the annotate extra (openpyxl) is not installed")


def item_ids(path: Path, sheet: str = "turns") -> list[str]:
    rows = list(openpyxl.load_workbook(path, read_only=True)[sheet].iter_rows(values_only=True))
    return [str(r[0]) for r in rows[1:]]


def test_the_sample_is_stratified_by_turn_and_type_and_fixed_by_its_seed(tmp_path: Path) -> None:
    store = scripted_run(tmp_path, conversations=10, turns=5)
    conversations = store.current_conversations()
    first = sample_turns(conversations, 20, seed=1)
    assert Counter(t.index for _, t in first) == {i: 4 for i in range(5)}  # 50 turns, 10 per turn number
    assert [(c.id, t.index) for c, t in first] == [(c.id, t.index) for c, t in sample_turns(conversations, 20, seed=1)]
    other = sample_turns(conversations, 20, seed=2)
    assert {(c.id, t.index) for c, t in other} != {(c.id, t.index) for c, t in first}
    whole = sample_turns(conversations, 7, by="conversation", seed=1)
    assert len(whole) == 10 and Counter(c.id for c, _ in whole).most_common(1)[0][1] == 5  # two whole dialogues


def test_overruled_turns_are_not_sampled(tmp_path: Path) -> None:
    store = scripted_run(tmp_path, conversations=1, turns=3)
    conv = store.current_conversations()[0]
    conv.turns[1] = conv.turns[1].model_copy(update={"validator_overruled": True})
    assert [t.index for _, t in sample_turns([conv], 10)] == [0, 2]


def test_export_writes_one_workbook_per_rater_with_excerpts_and_yes_no_validation(tmp_path: Path) -> None:
    store = scripted_run(tmp_path)
    sheet = tmp_path / "sheets" / "sheet.xlsx"
    assert main(["annotate", "export", str(store.path), "-o", str(sheet), "--sample", "8", "--raters", "2"]) == 0
    paths = [tmp_path / "sheets" / "sheet-rater1.xlsx", tmp_path / "sheets" / "sheet-rater2.xlsx"]
    assert all(p.is_file() for p in paths) and not sheet.exists()
    book = openpyxl.load_workbook(paths[0])
    assert book.sheetnames == ["turns", "dialogues", "criteria", "about"]
    turns = list(book["turns"].iter_rows(values_only=True))
    header, rows = list(turns[0]), turns[1:]
    assert len(rows) == 8 and {"correct", "answerable", "plausible", "answer_correct"} <= set(header)
    row = dict(zip(header, rows[-1], strict=True))
    assert row["item_id"] == f"{RUN_ID}/{row['conversation_id']}/t{row['turn']}"
    quote = f"quote {row['turn'] - 1} of doc {row['conversation_id'].split('-')[1]}"
    assert f"»{quote}«" in row["document_excerpt"] and "Before" in row["document_excerpt"]  # its surroundings
    if row["turn"] > 1:
        assert "User: question 0?" in row["conversation_so_far"]
    validations = book["turns"].data_validations.dataValidation
    assert validations and validations[0].formula1 == '"yes,no"'
    covered = " ".join(str(v.sqref) for v in validations)
    letter = openpyxl.utils.get_column_letter(header.index("correct") + 1)
    assert f"{letter}2:{letter}9" in covered
    dialogue_header = [c.value for c in book["dialogues"][1]]
    assert {"diverse", "coherent"} <= set(dialogue_header) and "correct" not in dialogue_header
    definitions = {r[0]: r[3] for r in book["criteria"].iter_rows(values_only=True) if r[0]}
    assert "source document" in definitions["answerable"]
    about = {r[0]: r[1] for r in book["about"].iter_rows(values_only=True) if r[0]}
    assert about["run"] == RUN_ID and about["rater"] == "rater1"
    assert item_ids(paths[0]) == item_ids(paths[1])  # both raters rate the same items


def test_round_trip_gives_the_known_shares_and_a_hand_computed_kappa(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = scripted_run(tmp_path)
    sheet = tmp_path / "sheet.xlsx"
    assert main(["annotate", "export", str(store.path), "-o", str(sheet), "--sample", "10", "--seed", "3"]) == 0
    one, two = tmp_path / "sheet-rater1.xlsx", tmp_path / "sheet-rater2.xlsx"
    ids = item_ids(one)
    dialogues = item_ids(one, "dialogues")
    assert len(ids) == 10
    # "correct": items 0-4 both yes, 5-6 only rater 1, 7 only rater 2, 8-9 both no
    first_yes, second_yes = set(range(0, 7)), set(range(0, 5)) | {7}

    def rater(yes: set[int], blank_answerable: bool) -> object:
        def rate(item: str, criterion: str) -> object:
            if item in dialogues:
                return "no" if (criterion == "coherent" and blank_answerable and item == dialogues[0]) else "yes"
            position = ids.index(item)
            if criterion == "correct":
                return "yes" if position in yes else "no"
            if criterion == "answerable":
                return None if blank_answerable and position < 4 else "Yes"
            if criterion == "plausible":
                return "no" if position == 9 else "yes"
            return None  # the optional answer labels are left blank

        return rate

    fill_xlsx(one, rater(first_yes, blank_answerable=False), rater="Ann")
    fill_xlsx(two, rater(second_yes, blank_answerable=True), rater="Bob")
    capsys.readouterr()
    assert main(["annotate", "import", str(store.path), str(one), str(two)]) == 0
    assert "imported" in capsys.readouterr().out
    stored = len(store.current_annotations())
    assert stored == 2 * 10 * 3 - 4 + 2 * 2 * len(dialogues)  # blanks are not ratings

    assert main(["annotate", "import", str(store.path), str(two)]) == 0  # again: replaces, never doubles
    assert len(store.current_annotations()) == stored
    assert len(store.annotations().records) > stored

    capsys.readouterr()
    assert main(["annotate", "summary", str(store.path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    table = {row["criterion"]: row for row in doc["table1"]}
    assert table["correct"]["by_rater"]["Ann"]["share"] == pytest.approx(0.7)
    assert table["correct"]["by_rater"]["Bob"]["share"] == pytest.approx(0.6)
    assert table["correct"]["average"] == pytest.approx(0.65)
    assert table["answerable"]["by_rater"]["Bob"] == {"yes": 6, "rated": 6, "share": 1.0}
    assert table["plausible"]["by_rater"]["Ann"]["share"] == pytest.approx(0.9)
    assert table["coherent"]["by_rater"]["Bob"]["share"] == pytest.approx(1 - 1 / len(dialogues))
    # Cohen's kappa by hand from the 2x2 table: a=5 both yes, b=2 Ann only, c=1 Bob only, d=2 both no
    a, b, c, d = 5, 2, 1, 2
    n = a + b + c + d
    observed = (a + d) / n
    chance = ((a + b) / n) * ((a + c) / n) + ((c + d) / n) * ((b + d) / n)
    kappa = (observed - chance) / (1 - chance)
    agreement = {row["criterion"]: row for row in doc["agreement"]}
    assert agreement["correct"]["kappa"] == pytest.approx(kappa)
    assert agreement["correct"]["raw"] == pytest.approx(0.7) and agreement["correct"]["items"] == 10
    assert agreement["answerable"]["kappa"] is None  # both said yes throughout: kappa is undefined, not 1 or 0
    rejected = [x for x in doc["disagreements"] if x["criterion"] == "correct"]
    assert len(rejected) == 2 and all(x["pipeline"] == "validator accepted it" for x in rejected)

    assert main(["annotate", "summary", str(store.path)]) == 0
    text = capsys.readouterr().out
    assert "70.0% (10)" in text and "60.0% (10)" in text and "65.0%" in text
    assert f"{kappa:.3f}" in text


def test_bad_cells_are_all_reported_by_sheet_row_and_column_and_nothing_is_imported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = scripted_run(tmp_path)
    sheet = tmp_path / "sheet.xlsx"
    assert main(["annotate", "export", str(store.path), "-o", str(sheet), "--sample", "5"]) == 0
    one, two = tmp_path / "sheet-rater1.xlsx", tmp_path / "sheet-rater2.xlsx"
    fill_xlsx(one, lambda item, criterion: "yes")
    book = openpyxl.load_workbook(two)
    header = [c.value for c in book["turns"][1]]
    correct, plausible = header.index("correct") + 1, header.index("plausible") + 1
    for row in book["turns"].iter_rows(min_row=2):
        for cell in row[correct - 1 : plausible]:
            cell.value = "yes"
    book["turns"].cell(row=3, column=correct).value = "maybe"
    book["turns"].cell(row=5, column=plausible).value = 0.7
    book["turns"].cell(row=4, column=1).value = "20990101-000000-other/conv-0/t1"
    book["dialogues"].cell(row=2, column=header.index("item_id") + 1).value = ""
    book.save(two)
    capsys.readouterr()
    assert main(["annotate", "import", str(store.path), str(one), str(two)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    c_letter = openpyxl.utils.get_column_letter(correct)
    p_letter = openpyxl.utils.get_column_letter(plausible)
    assert "4 problem(s), nothing was imported" in err
    assert f"sheet-rater2.xlsx sheet turns row 3 column {c_letter} (correct): 'maybe' is not yes or no" in err
    assert f"sheet turns row 5 column {p_letter} (plausible): '0.7' is not yes or no" in err
    assert "sheet turns row 4 column A (item_id): item '20990101-000000-other/conv-0/t1' is not from run" in err
    assert "Traceback" not in err
    assert not (store.path / ANNOTATIONS).exists()  # the good file was not imported either


def test_a_foreign_file_and_a_missing_sheet_are_one_error_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = scripted_run(tmp_path)
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "broken.xlsx").write_bytes(b"not a zip")
    assert (
        main(["annotate", "import", str(store.path), str(tmp_path / "notes.txt"), str(tmp_path / "broken.xlsx")]) == 2
    )
    err = capsys.readouterr().err
    assert "2 problem(s)" in err and "notes.txt" in err and "broken.xlsx" in err


def test_csv_sheets_round_trip_with_a_rater_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = scripted_run(tmp_path, with_corpus=False)
    out = tmp_path / "sheet.csv"
    assert main(["annotate", "export", str(store.path), "-o", str(out), "--sample", "4", "--raters", "1"]) == 0
    assert "evidence quotes only" in capsys.readouterr().err
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4 and "(document not available)" in rows[0]["document_excerpt"]
    for r in rows:
        r["correct"] = "no" if r is rows[0] else "yes"
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    dialogues = tmp_path / "sheet.dialogues.csv"
    assert main(["annotate", "import", str(store.path), str(out), str(dialogues)]) == 0
    capsys.readouterr()
    assert main(["annotate", "summary", str(store.path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["table1"][0]["by_rater"] == {"rater1": {"yes": 3, "rated": 4, "share": 0.75}}


def test_summary_without_ratings_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = scripted_run(tmp_path)
    assert main(["annotate", "summary", str(store.path)]) == 2
    assert "no ratings yet" in capsys.readouterr().err


def test_ratings_of_a_conversation_redone_since_are_stale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = scripted_run(tmp_path, conversations=2, turns=2)
    sheet = tmp_path / "sheet.xlsx"
    assert main(["annotate", "export", str(store.path), "-o", str(sheet), "--sample", "4", "--raters", "1"]) == 0
    fill_xlsx(sheet, lambda item, criterion: "yes" if criterion == "correct" else None)
    assert main(["annotate", "import", str(store.path), str(sheet)]) == 0
    redone = store.current_conversations()[0].model_copy(update={"finished": datetime.now(UTC)})
    store.append_conversation(redone)  # a resumed run redid conv-0: its old ratings no longer describe it
    capsys.readouterr()
    assert main(["annotate", "summary", str(store.path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["table1"][0]["by_rater"]["rater1"]["rated"] == 2 and doc["items"] == 2


def test_blank_sheets_import_nothing_and_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = scripted_run(tmp_path)
    sheet = tmp_path / "sheet.xlsx"
    assert main(["annotate", "export", str(store.path), "-o", str(sheet), "--sample", "3", "--raters", "1"]) == 0
    capsys.readouterr()
    assert main(["annotate", "import", str(store.path), str(sheet)]) == 0
    assert "nothing to import" in capsys.readouterr().err and not (store.path / ANNOTATIONS).exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "x.txt"], "must end in .xlsx or .csv"),
        (["-o", "x.xlsx", "--by", "dialogue"], "--by must be turn or conversation"),
        (["-o", "x.xlsx", "--sample", "0"], "--sample must be at least 1"),
        (["-o", "x.xlsx", "--raters", "0"], "--raters must be at least 1"),
        (["-o", "x.xlsx", "--corpus", "nowhere"], "corpus nowhere does not exist"),
    ],
)
def test_bad_export_options_are_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    store = scripted_run(tmp_path)
    assert main(["annotate", "export", str(store.path), *args]) == 2
    err = capsys.readouterr().err
    assert message in " ".join(err.split()) and "Traceback" not in err


def test_model_text_that_looks_like_a_formula_stays_text(tmp_path: Path) -> None:
    store = scripted_run(tmp_path, conversations=1, turns=1)
    conv = store.current_conversations()[0]
    conv.turns[0] = conv.turns[0].model_copy(update={"answer": '=HYPERLINK("http://x.invalid","click")'})
    store.append_conversation(conv)
    sheet = tmp_path / "sheet.xlsx"
    assert main(["annotate", "export", str(store.path), "-o", str(sheet), "--raters", "1"]) == 0
    cells = openpyxl.load_workbook(sheet)["turns"]
    header = [c.value for c in cells[1]]
    answer = cells.cell(row=2, column=header.index("answer") + 1)
    assert answer.data_type == "s" and answer.value.startswith("=HYPERLINK")


def test_a_sheet_without_a_rater_or_given_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = scripted_run(tmp_path)
    sheet = tmp_path / "sheet.xlsx"
    assert main(["annotate", "export", str(store.path), "-o", str(sheet), "--sample", "3", "--raters", "1"]) == 0
    fill_xlsx(sheet, lambda item, criterion: "yes", rater="")
    capsys.readouterr()
    assert main(["annotate", "import", str(store.path), str(sheet), str(sheet)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "2 problem(s)" in err and "sheet about: no rater named" in err and "given twice" in err
    assert not (store.path / ANNOTATIONS).exists()


def test_a_corpus_without_the_runs_documents_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = scripted_run(tmp_path, conversations=2)
    other = tmp_path / "other"
    other.mkdir()
    (other / "elsewhere.md").write_text("# Elsewhere\n\nNothing of the run.\n", encoding="utf-8")
    out = tmp_path / "sheet.csv"
    args = ["annotate", "export", str(store.path), "-o", str(out), "--raters", "1", "--corpus", str(other)]
    assert main(args) == 0
    assert "2 of the run's seed documents are not in the corpus (e.g. doc-0)" in capsys.readouterr().err
    with open(out, newline="", encoding="utf-8") as fh:
        assert all("(document not available)" in r["document_excerpt"] for r in csv.DictReader(fh))


def test_without_openpyxl_a_workbook_is_one_error_naming_the_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = scripted_run(tmp_path)
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # as if the annotate extra were not installed
    assert main(["annotate", "export", str(store.path), "-o", str(tmp_path / "s.xlsx"), "--raters", "1"]) == 2
    assert "pip install 'ragdive[annotate]'" in " ".join(capsys.readouterr().err.split())
    assert main(["annotate", "export", str(store.path), "-o", str(tmp_path / "s.csv"), "--raters", "1"]) == 0
