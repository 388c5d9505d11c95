"""Write annotation sheets: one workbook per rater (a turn sheet, a dialogue sheet, the criteria's definitions and
an "about" sheet naming the run and the rater), or the same as CSV files for tools without Excel.

Rating cells take yes or no: the workbook carries a list validation on them (openpyxl, the `annotate` extra), so
a rater picks from a drop-down and Excel refuses anything else. Raters work on separate files so that neither
sees the other's answers."""

from __future__ import annotations

import csv
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ConfigError, writing_to
from ..records import CRITERIA, criteria
from ..safe_text import csv_safe, xlsx_safe
from .annotation_rows import DialogueItem, TurnItem

TURN_FIELDS = [
    "item_id",
    "conversation_id",
    "turn",
    "question_type",
    "document_excerpt",
    "conversation_so_far",
    "user_message",
    "standalone_question",
    "ground_truth",
    "answer",
    "retrieved_contexts",
]
DIALOGUE_FIELDS = ["item_id", "conversation_id", "turns", "dialogue"]
NOTE = "note"
RATER = "rater"
TURN_SHEET, DIALOGUE_SHEET, CRITERIA_SHEET, ABOUT_SHEET = "turns", "dialogues", "criteria", "about"
_RATED = {c.name for c in CRITERIA}
WIDE = {"document_excerpt": 60, "conversation_so_far": 50, "dialogue": 90, "retrieved_contexts": 50}


def turn_header() -> list[str]:
    return TURN_FIELDS + [c.name for c in criteria("turn")] + [NOTE]


def dialogue_header() -> list[str]:
    return DIALOGUE_FIELDS + [c.name for c in criteria("dialogue")] + [NOTE]


def rater_names(count: int) -> list[str]:
    if count < 1:
        raise ConfigError(f"annotate: --raters must be at least 1, got {count}")
    return [f"rater{i}" for i in range(1, count + 1)]


def sheet_paths(output: Path, raters: list[str]) -> list[Path]:
    """``output`` itself for one rater; ``<stem>-<rater><suffix>`` beside it for several."""
    if output.suffix.lower() not in (".xlsx", ".csv"):
        raise ConfigError(f"annotate export: {output} must end in .xlsx or .csv")
    if len(raters) == 1:
        return [output]
    return [output.with_name(f"{output.stem}-{r}{output.suffix}") for r in raters]


def write_sheets(
    output: Path,
    raters: list[str],
    turns: list[TurnItem],
    dialogues: list[DialogueItem],
    about: dict[str, Any],
) -> list[Path]:
    """Write one rater's sheet per path; returns the files written."""
    written: list[Path] = []
    for rater, path in zip(raters, sheet_paths(output, raters), strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        info = {"run": about.get("run"), RATER: rater, **about, "exported": datetime.now(UTC).isoformat()}
        if path.suffix.lower() == ".xlsx":
            _write_xlsx(path, turns, dialogues, info)
            written.append(path)
        else:
            written += _write_csv(path, rater, turns, dialogues)
    return written


def dialogue_csv_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}.dialogues.csv")


def _write_csv(path: Path, rater: str, turns: list[TurnItem], dialogues: list[DialogueItem]) -> list[Path]:
    out = []
    for target, header, items in (
        (path, turn_header(), turns),
        (dialogue_csv_path(path), dialogue_header(), dialogues),
    ):
        with writing_to(target), open(target, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=[RATER, *header], restval="")
            writer.writeheader()
            for item in items:  # formulas as text (OWASP), as in `ragdive export`'s CSV
                writer.writerow({k: csv_safe(v) for k, v in {RATER: rater, **asdict(item)}.items()})
        out.append(target)
    return out


def require_openpyxl() -> Any:
    try:
        import openpyxl
    except ImportError as exc:
        raise ConfigError(f"annotation workbooks need openpyxl: pip install 'ragdive[annotate]' ({exc})") from exc
    return openpyxl


def _write_xlsx(path: Path, turns: list[TurnItem], dialogues: list[DialogueItem], info: dict[str, Any]) -> None:
    openpyxl = require_openpyxl()
    from openpyxl.styles import Alignment, Font
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.datavalidation import DataValidation

    book = openpyxl.Workbook()
    sheets: list[tuple[str, list[str], list[Any]]] = [
        (TURN_SHEET, turn_header(), list(turns)),
        (DIALOGUE_SHEET, dialogue_header(), list(dialogues)),
    ]
    for number, (title, header, items) in enumerate(sheets):
        sheet = book.active if number == 0 else book.create_sheet()
        sheet.title = title
        sheet.append(header)
        for item in items:
            row = asdict(item)
            # control characters openpyxl refuses (a form feed from pdftotext) shown as \xNN, not a crash
            sheet.append([xlsx_safe(row.get(name)) for name in header])
            for cell in sheet[sheet.max_row]:
                if cell.data_type == "f":  # model text that starts with "=" is text, never a live formula
                    cell.data_type = "s"
        sheet.freeze_panes = "B2"
        for cell in sheet[1]:
            cell.font = Font(bold=True)
        wrap = Alignment(wrap_text=True, vertical="top")
        for col, name in enumerate(header, start=1):
            letter = get_column_letter(col)
            sheet.column_dimensions[letter].width = WIDE.get(name, 14 if name in _RATED else 24)
            for (cell,) in sheet.iter_rows(min_row=2, min_col=col, max_col=col):
                cell.alignment = wrap
        rated = [get_column_letter(i) for i, name in enumerate(header, start=1) if name in _RATED]
        if rated and items:
            check = DataValidation(
                type="list",
                formula1='"yes,no"',
                allow_blank=True,
                showErrorMessage=True,
                errorTitle="yes or no",
                error="Answer yes or no (or leave the cell blank when you do not rate it).",
            )
            sheet.add_data_validation(check)
            for letter in rated:
                check.add(f"{letter}2:{letter}{len(items) + 1}")
    defs = book.create_sheet(CRITERIA_SHEET)
    defs.append(["criterion", "level", "title", "definition", "compared with"])
    for c in CRITERIA:
        defs.append([c.name, c.level, c.title, c.definition, c.checked_by])
    defs.append([])
    defs.append(
        [
            "",
            "",
            "",
            "Answer yes or no; leave a cell blank when you do not rate it. The optional "
            "answer_* columns calibrate the judge and may stay empty.",
            "",
        ]
    )
    for letter, width in zip("ABCDE", (16, 10, 28, 90, 40), strict=True):
        defs.column_dimensions[letter].width = width
    about = book.create_sheet(ABOUT_SHEET)
    for key, value in info.items():
        about.append([key, "" if value is None else xlsx_safe(str(value))])
    about.append([])
    about.append(["", "Write your name in the rater cell if you like; it names your ratings in the run."])
    with writing_to(path):
        book.save(path)
