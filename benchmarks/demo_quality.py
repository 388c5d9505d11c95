"""What the offline demo really produces with the packaged base model, measured in one run.

    python benchmarks/demo_quality.py [--conversations 4] [--max-turns 2] [--model ROLE=provider/model ...]

Same corpus, seed and settings as `ragdive demo` (only the number of conversations changes), with a fresh
model-call cache so every call is really made. Prints five figures, each with its n:
- drafts that pass the deterministic checks (an unreadable draft counts as one that did not pass);
- turns accepted without `validator_overruled` (the validator, not the attempt limit, let them through);
- judge items scored (not unscored for any reason: no contexts, judge output unusable, ...);
- turns whose target reply carried at least one retrieved context;
- wall time of the whole pipeline (simulation and scoring, model loading included).

The machine's load is printed too: wall times on a shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragdive.api import load_experiment  # noqa: E402
from ragdive.config import ExperimentConfig  # noqa: E402
from ragdive.demo import demo_config  # noqa: E402
from ragdive.pipeline import PipelineOutcome, prepare_experiment, run_experiment  # noqa: E402
from ragdive.store import RunStore  # noqa: E402


async def experiment(config: ExperimentConfig) -> PipelineOutcome:
    async with AsyncExitStack() as resources:
        return await run_experiment(await prepare_experiment(config, resources))


def share(part: int, whole: int) -> str:
    pct = f"{100 * part / whole:.0f} %" if whole else "n/a"
    return f"{part}/{whole} = {pct}"


def figures(store: RunStore) -> list[tuple[str, str]]:
    conversations = store.conversations().records
    turns = [t for c in conversations for t in c.turns]
    attempts = [a for t in turns for a in t.attempts]
    unreadable = sum(len(t.generation_errors) for t in turns)
    passed = sum(1 for a in attempts if a.verdict.checked_by != "deterministic")
    accepted = sum(1 for t in turns if not t.validator_overruled)
    scores = store.scores().records
    scored = sum(1 for s in scores if s.scored)
    with_contexts = sum(1 for t in turns if t.contexts)
    ended = [c for c in conversations if c.status != "finished"]
    rows = [
        ("drafts passing the deterministic checks", share(passed, len(attempts) + unreadable)),
        ("turns accepted without validator_overruled", share(accepted, len(turns))),
        ("judge items scored", share(scored, len(scores))),
        ("turns with retrieved contexts", share(with_contexts, len(turns))),
    ]
    if unreadable:
        rows.append(("  of the drafts: unreadable", str(unreadable)))
    if ended:
        rows.append(("conversations not finished", f"{len(ended)}/{len(conversations)}"))
    reasons: dict[str, int] = {}
    for s in scores:
        if not s.scored:
            key = (s.unscored_reason or s.reason or "")[:90]
            reasons[key] = reasons.get(key, 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1])[:4]:
        rows.append((f"  unscored x{count}", reason))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=None, help="default: the demo's (2)")
    parser.add_argument("--model", action="append", default=[], help="ROLE=provider/model, as `ragdive demo`")
    parser.add_argument("--keep", type=Path, default=None, help="keep the run under this folder")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        config = load_experiment(
            demo_config(out), models=args.model, conversations=args.conversations, max_turns=args.max_turns
        )
        load_before = os.getloadavg()[0]
        began = time.perf_counter()
        outcome = asyncio.run(experiment(config))
        wall = time.perf_counter() - began
        load_after = os.getloadavg()[0]
        sim = config.simulation
        rows = figures(outcome.store)
        rows.append(("wall time", f"{wall:.0f} s ({sim.conversations} conversations x {sim.max_turns} turns)"))
        rows.append(("load average (1 min) before / after", f"{load_before:.2f} / {load_after:.2f}"))
        rows.append(("cores", str(os.cpu_count())))
        rows.append(("status", outcome.status))
        width = max(len(name) for name, _ in rows)
        print(f"demo quality: {config.models.for_role('user').model if config.models.for_role('user') else '?'}")
        for name, value in rows:
            print(f"  {name:<{width}}  {value}")


if __name__ == "__main__":
    main()
