"""The human ratings of a run (annotations.jsonl, written by ``ragdive annotate import``), for the exports'
``annotations`` column. Read leniently: the file may be absent (no ratings yet) and its lines are taken as JSON
objects with ``rater``, ``conversation_id``, ``turn_index``, ``criterion`` and ``value``; a line without them, or
a rating of a conversation line redone since (its ``conversation_finished`` differs), is left out."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from ..records import Conversation

ANNOTATIONS = "annotations.jsonl"
ItemKey = tuple[str, int | None]


def ratings_by_item(run_dir: Path, conversations: list[Conversation]) -> dict[ItemKey, dict[str, dict[str, bool]]]:
    """(conversation id, turn index or None) → criterion → rater → yes/no; the latest line per rater, item and
    criterion wins, as the annotation readers have it."""
    path = Path(run_dir) / ANNOTATIONS
    if not path.is_file():
        return {}
    finished = {c.id: c.finished for c in conversations}
    latest: dict[tuple[str, str, int | None, str], bool] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row: Any = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line of a killed import: the annotation readers skip it too
        if not isinstance(row, dict) or not _complete(row) or _stale(row, finished):
            continue
        latest[(row["rater"], row["conversation_id"], row.get("turn_index"), row["criterion"])] = bool(row["value"])
    out: dict[ItemKey, dict[str, dict[str, bool]]] = {}
    for (rater, cid, turn, criterion), value in sorted(latest.items(), key=lambda kv: str(kv[0])):
        out.setdefault((cid, turn), {}).setdefault(criterion, {})[rater] = value
    return out


def _complete(row: dict[str, Any]) -> bool:
    return all(isinstance(row.get(k), str) for k in ("rater", "conversation_id", "criterion")) and isinstance(
        row.get("value"), bool
    )


def _stale(row: dict[str, Any], finished: dict[str, datetime]) -> bool:
    rated = row.get("conversation_finished")
    if not rated or row["conversation_id"] not in finished:
        return False
    try:
        return datetime.fromisoformat(rated) != finished[row["conversation_id"]]
    except (TypeError, ValueError):
        return False
