"""The annotation round trip on a large run, timed stage by stage in one run.

    python benchmarks/annotate_bench.py [--conversations 1000] [--turns 7] [--sample 200] [--corpus DIR]

Builds a run of scripted conversations over the SQuAD corpus (each turn quotes a real sentence of its article as
evidence, so every excerpt is searched for in a real document), then times: reading the corpus, sampling and
building the items, writing two raters' workbooks, filling them (openpyxl, as a rater's tool would), importing
both, and the summary. Prints each stage's wall time and its share of the whole (setup left out), and the
machine's load, since wall times on a shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragdive.analysis import summarize_annotations  # noqa: E402
from ragdive.corpus import load_documents  # noqa: E402
from ragdive.interop import annotation_items, read_annotations, write_sheets  # noqa: E402
from ragdive.records import Attempt, Context, Conversation, Turn, TurnDraft, Verdict  # noqa: E402
from ragdive.store import RunStore  # noqa: E402
from tests.annotate_runs import fill_xlsx  # noqa: E402

SQUAD = Path(__file__).resolve().parents[2] / "shared" / "data" / "squad" / "corpus"
TYPES = ["initial", "follow-up", "clarification", "follow-up", "correction", "follow-up", "comparative"]


def build_run(root: Path, documents: dict[str, str], conversations: int, turns: int) -> RunStore:
    store = RunStore.create(root, run_id="bench-annotate")
    ids = sorted(documents)
    for c in range(conversations):
        doc = ids[c % len(ids)]
        sentences = [s.strip() for s in documents[doc].split(". ") if len(s.strip()) > 40] or [documents[doc][:80]]
        conv_turns = []
        for i in range(turns):
            quote = sentences[(c + i * 7) % len(sentences)]
            draft = TurnDraft(
                rag_input=f"what about {quote[:30]}?",
                standalone_question=f"In {doc}, what about {quote[:30]}?",
                ground_truth=quote,
                question_type="initial" if i == 0 else TYPES[i % len(TYPES)],  # type: ignore[arg-type]
                evidence=[quote],
            )
            conv_turns.append(
                Turn(
                    index=i,
                    **draft.model_dump(),
                    attempts=[Attempt(draft=draft, verdict=Verdict(valid=True))],
                    answer=quote,
                    contexts=[Context(text=quote, source=doc)],
                )
            )
        store.append_conversation(
            Conversation(id=f"conv-{c}", index=c, persona="p", document_ids=[doc], seed=c, turns=conv_turns)
        )
    return store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=7)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--corpus", type=Path, default=SQUAD)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"no corpus at {args.corpus} (give --corpus)")
    timings: list[tuple[str, float]] = []

    def timed(name: str, start: float) -> float:
        now = time.perf_counter()
        timings.append((name, now - start))
        return now

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        documents = {d.id: d.text for d in load_documents(args.corpus)}
        t = timed(f"read corpus ({len(documents)} documents)", t)
        store = build_run(Path(tmp), documents, args.conversations, args.turns)
        t = timed(f"(setup) write the run ({args.conversations * args.turns} turns)", t)
        conversations = store.current_conversations()
        t = timed("read the run's conversations", t)
        turns, dialogues = annotation_items("bench-annotate", conversations, documents, size=args.sample, seed=1)
        t = timed(f"sample {len(turns)} turns + {len(dialogues)} dialogues, excerpts", t)
        paths = write_sheets(Path(tmp) / "sheet.xlsx", ["r1", "r2"], turns, dialogues, {"run": "bench-annotate"})
        t = timed("write 2 workbooks", t)
        for path in paths:
            fill_xlsx(path, lambda item, criterion: "yes" if zlib.crc32(f"{item}{criterion}".encode()) % 5 else "no")
        t = timed("fill 2 workbooks (openpyxl)", t)
        annotations = read_annotations(paths, "bench-annotate", conversations)
        store.append_annotations(annotations)
        t = timed(f"validate + import {len(annotations)} ratings", t)
        ratings, scores = store.current_annotations(), store.current_scores()
        t = timed("read ratings and scores back (scores re-read the conversations)", t)
        summary = summarize_annotations(ratings, conversations, scores)
        timed("summary (Table 1, kappa, disagreements)", t)
        found = sum(1 for item in turns if "»" in item.document_excerpt)
    total = sum(s for name, s in timings if not name.startswith("(setup)"))
    load = os.getloadavg()[0]
    print(f"annotate round trip, {args.conversations} conversations x {args.turns} turns (load {load:.1f})")
    for name, seconds in timings:
        share = "" if name.startswith("(setup)") else f"{100 * seconds / total:5.1f}%"
        print(f"  {name:<66} {seconds:7.2f} s  {share}")
    print(f"  {'total (without setup)':<66} {total:7.2f} s")
    print(f"  excerpts with the evidence found in its document: {found}/{len(turns)}")
    print(f"  raters: {summary.validation.raters}, items rated: {summary.validation.items}")


if __name__ == "__main__":
    main()
