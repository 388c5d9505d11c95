"""Size and load time of the HTML report of a scripted run, measured in one run.

    python benchmarks/report_size.py [--conversations 100] [--turns 5] [--loads 3] [--no-full-bundle]
    python benchmarks/report_size.py --conversations 1000 --turns 5 --no-full-bundle --cli   # issue 27's size
    python benchmarks/report_size.py --conversations 10000 --turns 5 --no-full-bundle --cli --loads 1
    python benchmarks/report_size.py --conversations 1000 --turns 5 --no-full-bundle --prose CORPUS_FOLDER

Builds a run shaped like a real one (realistic_run: 6 per-turn metrics and 2 per conversation with judges'
reasons, real-length messages, answers and retrieved passages; ``--scripted`` for the small scripted run of
tests/report_runs.py), writes its report, and prints: the file's size in MB, the time to
write it, and in headless system Chromium the time from navigation to the `load` event, to the first contentful
paint, and to when the charts and the conversation browser are drawn (a fresh browser for each load: no code
cache, as when a person first opens the file); the median of --loads loads. The same page with plotly.py's full
plotly.js bundle instead of the vendored cartesian one is measured alternately with it, and the ratios printed
(--no-full-bundle skips it). Then the last conversation is opened and the time until its turns show printed
(they are unpacked on demand). --cli also times `ragdive report --uniqueness exact` on the run in a process of its
own and prints its wall time and peak RSS. Budgets: issue 14, <= 8 MB and <= 3 s for 100 conversations x 5 turns;
issue 27, <= 5 MB, <= 2 s and <= 250 MiB for 1,000 x 5, and <= 30 MB, <= 5 s for 10,000 x 5. Wall times on a
shared 2-core machine are noisy: compare the ratios, and the load average printed.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragdive.records import Context, Score, Totals  # noqa: E402
from ragdive.report import html as report_html  # noqa: E402
from ragdive.report import report_data, write_report  # noqa: E402
from ragdive.store import RunStore  # noqa: E402
from tests.browser import chromium, missing  # noqa: E402
from tests.factories import make_conversation  # noqa: E402
from tests.report_runs import write_scripted_run  # noqa: E402

PER_TURN_METRICS = (
    "faithfulness",
    "answer_relevancy",
    "context_precision",
    "context_recall",
    "correctness",
    "context_relevance",
)
CONVERSATION_METRICS = ("forgetfulness", "context_retention")


def prose_words(folder: Path) -> list[str]:
    """The words of every .md and .txt file under ``folder``, in order (for --prose)."""
    words: list[str] = []
    for path in sorted(folder.rglob("*")):
        if path.suffix in (".md", ".txt") and path.is_file():
            words.extend(path.read_text(encoding="utf-8", errors="replace").split())
    if len(words) < 1000:
        raise SystemExit(f"error: --prose {folder}: fewer than 1,000 words in its .md and .txt files")
    return words


def realistic_run(
    root: Path, conversations: int, turns: int, seed: int = 0, prose: list[str] | None = None
) -> RunStore:
    """A finished run shaped like a real one: 6 per-turn metrics and 2 per conversation, each with a judge's
    reason; per turn a message, its stand-alone form, a ground truth with its evidence, a ~350-character answer
    and 3 retrieved passages of ~300 characters drawn from a corpus of chunks (a retriever returns the same chunk
    for several questions); words drawn Zipf-like from a 3,000-word vocabulary, so text compresses about as
    prose does (``prose``: passages of real text instead, which repeat phrases as a corpus does). Sized so the
    report's conversations as plain JSON come to about the 11.4 MB issue 27 measured for a real 1,000 x 5 run
    with 6 metrics (printed: see the 'as plain JSON' figure)."""
    rng = random.Random(seed)
    letters, vowels = "bcdfghklmnprstvw", "aeiou"
    vocabulary = [
        "".join(rng.choice(letters) + rng.choice(vowels) for _ in range(rng.randint(1, 4))) for _ in range(3000)
    ]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    # the random words average ~6 characters with their space, so a text of ``chars`` has ~6/7 of that many
    prose_word_chars = sum(len(w) + 1 for w in prose) / len(prose) if prose else 0.0

    def text(chars: int) -> str:
        if prose:  # a passage of real text (its phrases repeat as a corpus's do, which random words never do)
            n = max(1, round(chars * 6 / 7 / prose_word_chars))  # as long as the random words' text (below)
            start = rng.randrange(len(prose) - n)
            return " ".join(prose[start : start + n])
        words = rng.choices(vocabulary, weights, k=max(1, chars // 7))
        return " ".join(words).capitalize() + "."

    chunks = [text(300) for _ in range(max(50, conversations))]
    store = RunStore.create(
        root,
        run_id="20260101-000000-realistic",
        name="realistic",
        status="finished",
        config={"corpus": {"path": "corpus"}},
        models={"user": "openai/user", "validator": "openai/validator", "judge": "openai/judge"},
        target="openai-chat: rag",
        seed=seed,
        totals=Totals(conversations=conversations, turns=conversations * turns),
    )
    # written in batches (one write and one fsync each): a line-at-a-time fsync made a 10,000 x 5 run take many
    # minutes to build; the random draws, and so the run, are the same
    pending: list[Any] = []
    pending_scores: list[Score] = []

    def flush() -> None:
        store.append_conversations(pending)
        store.append_scores(pending_scores)
        pending.clear()
        pending_scores.clear()

    for i in range(conversations):
        conversation = make_conversation(f"conv-{i:05d}", turns=turns, index=i)
        conversation.persona = ("curious", "precise", "impatient")[i % 3]
        for turn in conversation.turns:
            turn.rag_input = text(100)
            turn.standalone_question = text(120)
            turn.ground_truth = text(160)
            turn.evidence = [text(140)]
            turn.answer = text(350)
            turn.contexts = [
                Context(text=rng.choice(chunks), source=f"doc-{rng.randrange(500)}", score=round(rng.random(), 3))
                for _ in range(3)
            ]
        pending.append(conversation)
        for turn in conversation.turns:
            for metric in PER_TURN_METRICS:
                pending_scores.append(
                    Score(
                        conversation_id=conversation.id,
                        turn_index=turn.index,
                        metric=metric,
                        value=round(rng.random(), 3),
                        reason=text(110),
                    )
                )
        for metric in CONVERSATION_METRICS:
            pending_scores.append(
                Score(conversation_id=conversation.id, metric=metric, value=round(rng.random(), 3), reason=text(200))
            )
        if len(pending) == 500:
            flush()
    flush()
    return store


TIMING = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  return {
    ready: Number(document.body.dataset.readyMs),
    load: nav.loadEventStart,
    domContentLoaded: nav.domContentLoadedEventEnd,
    fcp: fcp ? fcp.startTime : null,
  };
}"""


OPEN_LAST = """async () => {
  const details = document.querySelectorAll("#conversation-list details");
  const last = details[details.length - 1];
  const started = performance.now();
  last.open = true;
  while (!last.querySelector(".turn")) await new Promise((r) => setTimeout(r, 5));
  return performance.now() - started;
}"""


def full_bundle_page(html: str) -> str:
    """The same report with plotly.py's full plotly.js bundle in place of the vendored cartesian one."""
    from plotly.offline import get_plotlyjs

    vendored = report_html.packed_plotly_js()
    assert vendored in html
    return html.replace(vendored, report_html.pack_bytes(get_plotlyjs().encode("utf-8")))


def load_once(path: Path) -> dict[str, Any]:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(path.as_uri(), wait_until="load")
        page.wait_for_selector("#conversation-list details")
        timing = page.evaluate(TIMING)
        timing["shown"] = page.locator("#conversation-list details").count()
        timing["open"] = page.evaluate(OPEN_LAST)
        return timing


# Linux keeps in a process's peak RSS the peak of what it was before its exec: a child forked from this benchmark
# (which holds the run, and with --prose 2.2 million words) reported this process's peak as its own (294 MiB at
# 1,000 x 5 on prose, where `ragdive report` itself peaks at ~160). So a small launcher process starts it and
# prints the wall time and peak RSS (wait4) of its own child, whose peak starts from the launcher's few MiB.
LAUNCHER = """
import os, subprocess, sys, time
started = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(time.perf_counter() - started, usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def cli_report(run: Path) -> None:
    """`ragdive report` as a user runs it, in its own process: its wall time and peak RSS (the kernel's figure for
    that process alone, read by a launcher: see LAUNCHER)."""
    import ragdive

    src = str(Path(ragdive.__file__).resolve().parents[1])  # the ragdive this benchmark imported (a baseline's too)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    command = [sys.executable, "-m", "ragdive", "report", str(run), "--uniqueness", "exact"]
    out = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *command], check=True, env=env, capture_output=True, text=True
    ).stdout
    wall, peak_kib = out.split()
    print(f"  ragdive report --uniqueness exact: {float(wall):.2f} s, peak RSS {int(peak_kib) / 1024:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--loads", type=int, default=3, help="loads per page (the median is printed)")
    parser.add_argument("--no-full-bundle", action="store_true", help="do not measure the full-bundle page")
    parser.add_argument("--scripted", action="store_true", help="the small scripted run of the report's tests")
    parser.add_argument("--cli", action="store_true", help="also time `ragdive report` and print its peak RSS")
    parser.add_argument(
        "--prose",
        type=Path,
        help="a folder of .md/.txt documents: every text of the run is a passage of them instead of random words",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.scripted:
            store = write_scripted_run(Path(tmp), conversations=args.conversations, turns=args.turns)
        else:
            prose = prose_words(args.prose) if args.prose else None
            store = realistic_run(Path(tmp), args.conversations, args.turns, prose=prose)
            print(f"texts: {'passages of ' + str(len(prose)) + ' words of prose' if prose else 'random words'}")
        data_mb = sum((store.path / name).stat().st_size for name in ("conversations.jsonl", "evaluations.jsonl")) / 1e6
        print(f"run files (conversations + evaluations): {data_mb:.2f} MB")
        started = time.perf_counter()
        path = write_report(store)
        written = time.perf_counter() - started
        pages = {"cartesian bundle (shipped)": path}
        if not args.no_full_bundle:
            full = Path(tmp) / "full-bundle.html"
            full.write_text(full_bundle_page(report_html.render_report(report_data(store))), encoding="utf-8")
            pages["full bundle (plotly.py's)"] = full
        print(f"report of {args.conversations} conversations x {args.turns} turns (write {written:.2f} s)")
        if args.cli:
            cli_report(store.path)
        as_json = len(report_html.json_block(list(report_data(store)["conversations"])).encode("utf-8"))
        page = path.read_text(encoding="utf-8")
        blocks = re.findall(
            r'<script type="application/octet-stream" (?:id|class)="([^"]+)"[^>]*>(.*?)</script>', page, re.S
        )
        packed = sum(len(text.encode("utf-8")) for name, text in blocks if name != "report-plotly")
        print(
            f"  conversation data: {packed / 1e6:.2f} MB packed ({len(blocks) - 1} blocks) vs "
            f"{as_json / 1e6:.2f} MB as plain JSON (the report until issue 27): x{packed / as_json:.2f}"
        )
        reason = missing()
        if reason:
            for name, p in pages.items():
                print(f"  {name:28} {p.stat().st_size / 1e6:.2f} MB; load time not measured: {reason}")
            return
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in pages}
        for _ in range(args.loads):
            for name, p in pages.items():  # alternately: both see the same machine load
                runs[name].append(load_once(p))
        medians = {}
        for name, p in pages.items():
            m = {k: statistics.median(r[k] for r in runs[name]) for k in ("load", "ready", "domContentLoaded", "open")}
            fcps = [r["fcp"] for r in runs[name] if r["fcp"] is not None]
            medians[name] = (p.stat().st_size, m)
            print(f"  {name}")
            print(f"    size        {p.stat().st_size / 1e6:.2f} MB ({p.stat().st_size} bytes)")
            print(f"    load event  {m['load'] / 1000:.2f} s (DOMContentLoaded {m['domContentLoaded'] / 1000:.2f} s)")
            fcp = f"{statistics.median(fcps) / 1000:.2f} s" if fcps else "n/a"
            shown = runs[name][0]["shown"]
            print(f"    first paint {fcp}; charts and browser drawn {m['ready'] / 1000:.2f} s; {shown} listed")
            print(f"    the last conversation opened: its turns shown {m['open'] / 1000:.2f} s after")
        if len(medians) == 2:
            (small, a), (big, b) = medians.values()
            print(f"  full / cartesian: size x{big / small:.2f}, load x{b['load'] / a['load']:.2f}")
        print(f"  machine load average {os.getloadavg()[0]:.2f} ({args.loads} loads per page, medians)")


if __name__ == "__main__":
    main()
