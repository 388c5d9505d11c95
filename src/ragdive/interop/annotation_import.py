"""Read filled annotation sheets back into Annotation records.

Everything is checked before anything is stored: every bad cell of every file is reported at once, by file,
sheet, row and column, and then nothing is imported. A blank rating cell is "not rated" and gives no record."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..records import Annotation, Conversation, criteria, item_id
from .annotation_sheet import ABOUT_SHEET, DIALOGUE_SHEET, RATER, TURN_SHEET, require_openpyxl

YES = {"yes", "y", "1", "true"}
NO = {"no", "n", "0", "false"}
MAX_REPORTED = 50


@dataclass
class Table:
    """One sheet's rows as read: where it came from, its header, its rows (row number as the rater sees it)."""

    file: str
    sheet: str
    level: str
    header: list[str]
    rows: list[tuple[int, list[Any]]]
    rater: str | None = None
    """The sheet's rater (workbooks: from the about sheet); None when each row names it (CSV)."""


@dataclass
class Problems:
    lines: list[str] = field(default_factory=list)

    def add(self, where: str, what: str) -> None:
        self.lines.append(f"{where}: {what}")


def _letter(column: int) -> str:
    name = ""
    while column:
        column, rest = divmod(column - 1, 26)
        name = chr(65 + rest) + name
    return name


def read_tables(path: Path, problems: Problems) -> list[Table]:
    if not path.is_file():
        problems.add(str(path), "no such file")
        return []
    if path.suffix.lower() == ".csv":
        return _read_csv(path, problems)
    if path.suffix.lower() == ".xlsx":
        return _read_xlsx(path, problems)
    problems.add(str(path), "not an annotation sheet (expected .xlsx or .csv)")
    return []


def _read_csv(path: Path, problems: Problems) -> list[Table]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        problems.add(path.name, f"cannot be read as CSV ({exc})")
        return []
    if not rows:
        problems.add(path.name, "is empty")
        return []
    header = [h.strip() for h in rows[0]]
    level = "turn" if "turn" in header else "dialogue"
    numbered = [(n, list(r)) for n, r in enumerate(rows[1:], start=2) if any(c.strip() for c in r)]
    return [Table(path.name, "csv", level, header, numbered)]


def _read_xlsx(path: Path, problems: Problems) -> list[Table]:
    openpyxl = require_openpyxl()
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # a damaged or foreign file: openpyxl raises many kinds
        problems.add(path.name, f"cannot be read as a workbook ({type(exc).__name__}: {exc})")
        return []
    try:
        rater = None
        if ABOUT_SHEET in book.sheetnames:
            for key, value, *_ in book[ABOUT_SHEET].iter_rows(values_only=True, max_col=2):
                if key == RATER and value is not None and str(value).strip():
                    rater = str(value).strip()
        if rater is None:
            problems.add(f"{path.name} sheet {ABOUT_SHEET}", "no rater named (a row 'rater' with a name)")
        tables = []
        for name, level in ((TURN_SHEET, "turn"), (DIALOGUE_SHEET, "dialogue")):
            if name not in book.sheetnames:
                problems.add(path.name, f"has no sheet {name!r}")
                continue
            rows = list(book[name].iter_rows(values_only=True))
            header = [str(h).strip() if h is not None else "" for h in (rows[0] if rows else [])]
            numbered = [
                (n, list(r))
                for n, r in enumerate(rows[1:], start=2)
                if any(c is not None and str(c).strip() for c in r)
            ]
            tables.append(Table(path.name, name, level, header, numbered, rater=rater or "?"))
        return tables
    finally:
        book.close()


def _parse(value: Any) -> bool | None | str:
    """True / False for yes / no, None for blank, the text itself when it is neither."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if not text:
        return None
    if text in YES:
        return True
    if text in NO:
        return False
    return str(value)


def read_annotations(paths: Iterable[Path], run_id: str, conversations: list[Conversation]) -> list[Annotation]:
    """Every rating in ``paths``, or one ConfigError listing every problem (nothing is returned half)."""
    problems = Problems()
    turns: dict[str, tuple[str, int | None]] = {
        item_id(run_id, c.id, t.index): (c.id, t.index) for c in conversations for t in c.turns
    }
    dialogues: dict[str, tuple[str, int | None]] = {item_id(run_id, c.id): (c.id, None) for c in conversations}
    finished = {c.id: c.finished for c in conversations}
    out: list[Annotation] = []
    seen: dict[tuple[str, str, str], str] = {}
    given: set[Path] = set()
    for path in paths:
        if Path(path).resolve() in given:
            problems.add(str(path), "given twice")
            continue
        given.add(Path(path).resolve())
        for table in read_tables(Path(path), problems):
            known = turns if table.level == "turn" else dialogues
            out += _read_table(table, known, run_id, problems, seen)
    out = [a.model_copy(update={"conversation_finished": finished[a.conversation_id]}) for a in out]
    if problems.lines:
        shown = problems.lines[:MAX_REPORTED]
        more = len(problems.lines) - len(shown)
        tail = [f"... and {more} more"] if more else []
        raise ConfigError(
            f"annotate import: {len(problems.lines)} problem(s), nothing was imported:\n" + "\n".join(shown + tail)
        )
    return out


def _read_table(
    table: Table,
    known: dict[str, tuple[str, int | None]],
    run_id: str,
    problems: Problems,
    seen: dict[tuple[str, str, str], str],
) -> list[Annotation]:
    where = f"{table.file} sheet {table.sheet}"
    names = [c.name for c in criteria(table.level)]
    columns = {h: i for i, h in enumerate(table.header) if h}
    missing = [n for n in ["item_id", *names] if n not in columns]
    if table.rater is None and RATER not in columns:
        missing.append(RATER)
    if missing:
        problems.add(where, f"header lacks column(s) {', '.join(missing)}")
        return []
    out = []
    for number, row in table.rows:
        cells = row + [None] * (len(table.header) - len(row))
        raw_id = cells[columns["item_id"]]
        at = f"{where} row {number}"
        key = str(raw_id).strip() if raw_id is not None else ""
        if key not in known:
            problems.add(f"{at} column {_letter(columns['item_id'] + 1)} (item_id)", _unknown_item(key, run_id))
            continue
        rater = table.rater
        if rater is None:
            value = cells[columns[RATER]]
            rater = str(value).strip() if value is not None else ""
            if not rater:
                problems.add(f"{at} column {_letter(columns[RATER] + 1)} ({RATER})", "no rater named")
                continue
        conversation_id, turn_index = known[key]
        for name in names:
            col = columns[name]
            parsed = _parse(cells[col])
            cell = f"{at} column {_letter(col + 1)} ({name})"
            if isinstance(parsed, str):
                problems.add(cell, f"{parsed!r} is not yes or no (leave it blank when not rated)")
                continue
            if parsed is None:
                continue
            first = seen.setdefault((rater, key, name), cell)
            if first != cell:
                problems.add(cell, f"rater {rater} already rated {name} of {key} at {first}")
                continue
            out.append(
                Annotation(
                    run_id=run_id,
                    conversation_id=conversation_id,
                    turn_index=turn_index,
                    rater=rater,
                    criterion=name,
                    value=parsed,
                    source=where,
                )
            )
    return out


def _unknown_item(key: str, run_id: str) -> str:
    if not key:
        return "no item id"
    if not key.startswith(f"{run_id}/"):
        return f"item {key!r} is not from run {run_id} (a sheet of another run?)"
    return f"item {key!r} is not in this run"
