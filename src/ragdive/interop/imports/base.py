"""What every importer returns, and the small readers they share.

An importer turns another tool's files into ragdive records without writing anything; ``write.py`` writes them
through the run store once every file has been read (a bad file leaves no half-imported run behind).

Unknown stays unknown: a question type the source does not give is ``unknown``, token totals are ``None``, a
judge's missing verdict is an unscored Score with its reason. Only values the run format cannot do without (ids,
seeds, times) are made up, and each such choice is said once in ``invented``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...json_lines import json_objects
from ...records import Conversation, QuestionType, Rejection, Score


@dataclass
class ImportedRun:
    """The records read from the source files, and what the manifest will say about them."""

    conversations: list[Conversation]
    scores: list[Score] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    """Validator rejections (the reference's validator logs)."""
    shape: str = "conversations"
    """conversations, or single-turn (a static set: one question per conversation)."""
    roles: dict[str, str] = field(default_factory=dict)
    """file name → what was read from it (conversations, single-turn scores...)."""
    invented: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_json(path: Path) -> Any:
    """A JSON file's content; a missing or broken file is one ConfigError naming it. NaN is accepted: the
    reference implementation's evaluation files carry it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from exc


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """One JSON object per non-empty line; a bad line is a ConfigError naming file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    return [row for _, row in json_objects(text, path)]


NOT_A_NUMBER = "the source has no value here (nan): its judge gave no verdict"


def score_value(raw: Any, where: str) -> float | None:
    """A score from a number or a numeric string ("1", "0.99999999995"); None for nan, null or "" (no verdict,
    which is never 0). Anything else, or a value outside [0, 1], is a ConfigError naming ``where``."""
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in ("", "nan", "none", "null")):
        return None
    if isinstance(raw, bool):
        raise ConfigError(f"{where}: expected a score, got {raw!r}")
    try:
        value = float(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: expected a score, got {raw!r}") from exc
    if math.isnan(value):
        return None
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"{where}: score {value} is outside [0, 1]")
    return value


def make_score(conversation_id: str, turn_index: int | None, metric: str, raw: Any, where: str, source: str) -> Score:
    value = score_value(raw, where)
    fingerprint = f"import:{source}"  # not a ragdive prompt: a re-evaluation tells these from its own scores
    if value is None:
        return Score.unscored(
            conversation_id=conversation_id,
            turn_index=turn_index,
            metric=metric,
            reason=NOT_A_NUMBER,
            kind="source_missing",
            prompt_fingerprint=fingerprint,
        )
    return Score(
        conversation_id=conversation_id,
        turn_index=turn_index,
        metric=metric,
        value=value,
        prompt_fingerprint=fingerprint,
    )


_TYPE_NAMES = {
    "initial": QuestionType.INITIAL,
    "follow-up": QuestionType.FOLLOW_UP,
    "followup": QuestionType.FOLLOW_UP,
    "clarification": QuestionType.CLARIFICATION,
    "correction": QuestionType.CORRECTION,
    "comparative": QuestionType.COMPARATIVE,
    "comparison": QuestionType.COMPARATIVE,
}


def question_type(raw: Any) -> QuestionType | None:
    """The ragdive type of a source's type name ("Initial", "Follow-Up", "follow_up"...); None when the name is
    missing or not one of the paper's types (the caller stores ``unknown`` and says so)."""
    if not isinstance(raw, str):
        return None
    return _TYPE_NAMES.get(raw.strip().lower().replace("_", "-").replace(" ", "-"))


def text(raw: Any, where: str, *, required: bool = True) -> str:
    """A string field; a missing one is a ConfigError when required, else ""."""
    if isinstance(raw, str):
        return raw
    if raw is None and not required:
        return ""
    raise ConfigError(f"{where}: expected text, got {type(raw).__name__}")
