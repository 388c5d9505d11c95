"""Everything `ragdive annotate summary` shows, from the run's records: human validation and judge calibration,
and the one JSON document `--json` prints."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..records import Annotation, Conversation, Score
from .calibration import Calibration, calibrate
from .human import HumanValidation, ItemKey, human_validation


@dataclass
class AnnotationSummary:
    validation: HumanValidation
    calibration: list[Calibration]

    def to_json(self) -> dict[str, Any]:
        v = self.validation
        return {
            "raters": v.raters,
            "items": v.items,
            "table1": [
                {
                    "criterion": s.criterion,
                    "level": s.level,
                    "by_rater": {r: {"yes": x.yes, "rated": x.rated, "share": x.share} for r, x in s.by_rater.items()},
                    "average": s.average,
                }
                for s in v.shares
            ],
            "agreement": [asdict(a) for a in v.agreement],
            "disagreements": [asdict(d) for d in v.disagreements],
            "calibration": [asdict(c) for c in self.calibration],
        }


def summarize_annotations(
    annotations: list[Annotation], conversations: list[Conversation], scores: list[Score]
) -> AnnotationSummary:
    """Ratings of turns or conversations no longer in the run, or of a conversation line redone since (a resumed
    run), are left out, as stale scores are."""
    present = {(c.id, None) for c in conversations} | {(c.id, t.index) for c in conversations for t in c.turns}
    finished = {c.id: c.finished for c in conversations}
    current = [
        a
        for a in annotations
        if (a.conversation_id, a.turn_index) in present
        and a.conversation_finished in (None, finished[a.conversation_id])
    ]
    accepted: set[ItemKey] = {(c.id, t.index) for c in conversations for t in c.turns if not t.validator_overruled}
    return AnnotationSummary(human_validation(current, conversations), calibrate(current, scores, accepted))
