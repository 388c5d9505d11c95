"""Human validation from Python: rating sheets out (`annotate_export`), ratings in (`annotate_import`), and Table 1,
agreement and the judge's calibration (`annotate_summary`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast, get_args

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..analysis import AnnotationSummary
    from ..store import RunStore


@dataclass
class RatingSheets:
    files: list[Path]
    turns: int
    dialogues: int
    raters: list[str]
    notes: list[str] = field(default_factory=list)
    """What the sheets lack and why (no corpus known, seed documents missing from it)."""


@dataclass
class ImportedRatings:
    ratings: int
    items: int
    raters: list[str]


def annotate_export(
    run: str | Path,
    output: str | Path,
    *,
    sample: int = 200,
    by: str = "turn",
    seed: int = 1,
    raters: int = 2,
    corpus: str | Path | None = None,
) -> RatingSheets:
    """Rating sheets (``output``: sheet.xlsx, or sheet.csv with one file per rater): ``sample`` turns (stratified
    by turn number and question type with ``by="turn"``, whole conversations with ``"conversation"``) with their
    document excerpt (from ``corpus``, else the run's) and the conversation so far; the same run and seed give the
    same sample."""
    from ..interop import annotation_items, rater_names, sheet_paths, write_sheets
    from ..interop.annotation_rows import SampleBy
    from ..store import RunStore

    store = RunStore.open(Path(run))
    run_id = store.read_manifest().run_id
    names = rater_names(raters)
    if by not in get_args(SampleBy):
        raise ConfigError(f"annotate export: --by must be turn or conversation, got {by!r}")
    sheet_paths(Path(output), names)  # a wrong suffix is an error before any work
    notes: list[str] = []
    documents = _documents(store, None if corpus is None else Path(corpus), notes)
    conversations = store.current_conversations()
    missing = {d for c in conversations for d in c.document_ids} - documents.keys()
    if documents and missing:  # the wrong corpus, or an edited one: say so rather than leave excerpts bare
        notes.append(
            f"{len(missing)} of the run's seed documents are not in the corpus (e.g. {sorted(missing)[0]}): "
            "their excerpts show the evidence only"
        )
    turns, dialogues = annotation_items(run_id, conversations, documents, size=sample, by=cast(SampleBy, by), seed=seed)
    about = {"run": run_id, "sample": len(turns), "by": by, "seed": seed}
    files = write_sheets(Path(output), names, turns, dialogues, about)
    return RatingSheets(files, len(turns), len(dialogues), names, notes)


def _documents(store: RunStore, corpus: Path | None, notes: list[str]) -> dict[str, str]:
    """The seed documents' text, for the excerpts: ``corpus``, else the corpus the run's config names. Without
    it the sheet shows the evidence quotes alone (and says so in each cell)."""
    from ..corpus import load_documents

    config = store.read_manifest().config
    named = (config.get("corpus") or {}).get("path") if isinstance(config.get("corpus"), dict) else None
    path = corpus or (Path(named) if named else None)
    if path is None:
        notes.append("no corpus known (give --corpus): excerpts show the evidence quotes only")
        return {}
    if not path.exists():
        if corpus is not None:
            raise ConfigError(f"annotate export: corpus {corpus} does not exist")
        notes.append(f"the run's corpus {path} is not here (give --corpus): excerpts show the evidence only")
        return {}
    fmt = (config.get("corpus") or {}).get("format", "auto") if corpus is None else "auto"
    return {d.id: d.text for d in load_documents(path, format=fmt)}


def annotate_import(run: str | Path, sheets: Sequence[str | Path]) -> ImportedRatings:
    """Store filled sheets' ratings in the run's annotations.jsonl. Every bad cell is reported (one ConfigError)
    and then nothing is stored; importing a sheet again replaces its earlier ratings."""
    from ..interop import read_annotations
    from ..store import RunStore

    store = RunStore.open(Path(run))
    run_id = store.read_manifest().run_id
    annotations = read_annotations([Path(s) for s in sheets], run_id, store.current_conversations())
    if annotations:
        store.append_annotations(annotations)
    raters = sorted({a.rater for a in annotations})
    items = len({(a.conversation_id, a.turn_index) for a in annotations})
    return ImportedRatings(len(annotations), items, raters)


def annotate_summary(run: str | Path) -> AnnotationSummary:
    """Table 1 (share of yes per criterion, per rater and averaged), agreement between raters, where the humans and
    the validator disagree, and the judge's calibration against the humans' labels."""
    from ..analysis import summarize_annotations
    from ..store import RunStore

    store = RunStore.open(Path(run))
    annotations = store.current_annotations()
    if not annotations:
        raise ConfigError(f"annotate summary: {run} has no ratings yet (ragdive annotate import RUN SHEET...)")
    return summarize_annotations(annotations, store.current_conversations(), store.current_scores())
