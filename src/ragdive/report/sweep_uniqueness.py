"""The paper's Table 3 for a sweep: the unique share of questions per turn across each cell's repeats.

The paper ran the same documents five times and counted, per turn, the questions no other run asked (39 % unique
at turn 1, 99 % at turn 5). A sweep cell's repeats are exactly that: the same config and seed documents, one run
per repeat. So each cell with two or more runs on disk gets the analysis library's uniqueness over all its runs'
conversations (analysis/conversations/uniqueness.py: same seed-document set, same turn; a method as chosen).
Unlike Tables 2, 4 and 5 this is computed here, from the runs, because tables.json does not carry it.
"""

from __future__ import annotations

from typing import Any

from ..analysis.conversations import DEFAULT_THRESHOLD, Embedder, Uniqueness, question_uniqueness, to_data
from ..records import Conversation
from ..records.sweep_tables import SweepTables
from ..store import RunStore


def cell_uniqueness(
    stores: dict[str, RunStore | None],
    tables: SweepTables,
    embed: Embedder | None,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[dict[str, Any]]:
    """One entry per cell whose runs can be compared: {cell, runs (read), uniqueness (as analyze --json)}.
    ``stores`` has each run's store, None for one not started or unreadable (its status says which)."""
    out = []
    for cell in tables.cells:
        conversations: list[Conversation] = []
        read = 0
        for run in cell.runs:
            store = stores.get(run)
            if store is None:
                continue
            conversations += store.current_conversations()
            read += 1
        if read < 2:
            continue
        u: Uniqueness = question_uniqueness(conversations, embed, threshold=threshold)
        if u.per_turn:
            out.append({"cell": cell.cell, "runs": read, "uniqueness": to_data(u)})
    return out


def turns_of(entries: list[dict[str, Any]]) -> list[str]:
    """The turn columns of the table: every turn some cell compared, in order."""
    return sorted({t for e in entries for t in e["uniqueness"]["per_turn"]}, key=int)
