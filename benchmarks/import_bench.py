"""Import and export speed on files of the RAG-DIVE reference shape, measured in one run.

    python benchmarks/import_bench.py [--conversations 1000] [--turns 7]

Writes made-up reference files (a conversation file, its single- and multi-turn evaluation files; three
retrieved documents per turn) to a temporary folder, then times: parsing them with json alone (the floor), the
importer's read and checks (no writing), the whole `import_run` (read, then the run written through the store
with one fsync'ed line per conversation), and exporting the imported run to each format. Prints seconds and the
ratio to the json floor. Wall times on a shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ragdive.interop import export_run  # noqa: E402
from ragdive.interop.imports import import_run, read_reference  # noqa: E402

TYPES = ("Initial", "Follow-Up", "Clarification", "Correction", "Comparative")


def write_reference_files(folder: Path, conversations: int, turns: int) -> list[Path]:
    convs, singles, multis = [], [], []
    for c in range(conversations):
        document = f"Document {c}. " + "Some sentence about the topic. " * 40
        conversation = []
        for t in range(turns):
            turn = {
                "rag_input": f"question {t} of conversation {c}?",
                "question": f"stand-alone question {t} of conversation {c}?",
                "answer": f"ground truth {t}",
                "type": TYPES[0] if t == 0 else TYPES[1 + (c + t) % 4],
                "rag_answer": f"answer {t} of conversation {c}",
                "context": [
                    {
                        "id": f"{c}-{t}-{k}",
                        "metadata": {"title": f"doc {c}"},
                        "page_content": document[:600],
                        "type": "Document",
                    }
                    for k in range(3)
                ],
                "index": t,
            }
            conversation.append(turn)
            singles.append(
                {
                    "content": turn["question"],
                    "correctness_aspect_critic": str((c + t) % 2),
                    "faithfulness_aspect_critic": "nan" if (c * turns + t) % 97 == 0 else "1.0",
                    "context_precision_critic": "0.99999999995",
                    "context_recall_critic": "1",
                }
            )
        verdict = {"forgetfulness_aspect_critic": str(c % 2), "context_retention_aspect_critic": "1"}
        for turn in conversation:
            multis += [{"content": turn["rag_input"], **verdict}, {"content": turn["rag_answer"], **verdict}]
        convs.append({"title": f"doc {c}", "document": document, "role": "precise", "conversation": conversation})
    files = {
        "conversation_data_bench.json": convs,
        "single_turn_evaluation_results_bench_evaluation.json": {
            "file_path": "conversation_data_bench.json",
            "detailed_results": singles,
        },
        "multi_turn_evaluation_results_bench_evaluation.json": {
            "file_path": "conversation_data_bench.json",
            "detailed_results": multis,
        },
    }
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    return [folder / name for name in files]


def timed(work) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = write_reference_files(folder, args.conversations, args.turns)
        size = sum(f.stat().st_size for f in files) / 1e6
        floor = timed(lambda: [json.loads(f.read_text(encoding="utf-8")) for f in files])
        rows = [("json.loads of the files (floor)", floor)]
        rows.append(("importer read + checks", timed(lambda: read_reference(files))))
        rows.append(
            ("import_run (read + write run)", timed(lambda: import_run("ragdive-reference", files, folder / "run")))
        )
        from ragdive.store import RunStore

        store = RunStore.open(folder / "run")
        for fmt in ("csv", "parquet", "ragas", "deepeval"):
            rows.append((f"export {fmt}", timed(lambda fmt=fmt: export_run(store, folder / f"out-{fmt}", [fmt]))))
    print(f"{args.conversations} conversations x {args.turns} turns, source files {size:.1f} MB")
    print(f"{'step':34} {'seconds':>8} {'x floor':>8}")
    for name, seconds in rows:
        print(f"{name:34} {seconds:8.2f} {seconds / floor:8.1f}")


if __name__ == "__main__":
    main()
