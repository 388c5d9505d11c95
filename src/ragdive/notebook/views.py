"""What a result looks like in a notebook and at the REPL: a short header and the per-metric table (mean, 95 % CI,
n scored, n unscored: an unscored item is counted, never shown as 0), as text and as HTML. Base classes of the
API's result dataclasses, which declare ``repr=False`` so this repr is the one used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .frames import COMPARISON_COLUMNS, comparison_rows, data_frame, run_frame, sweep_frame
from .tables import html_table, interval, number, text_table

METRIC_HEADER = ["metric", "mean", "95% CI", "n", "unscored"]


class RunResultView:
    """RunResult's display: its status, counts and per-metric table; ``to_pandas`` reads the run directory."""

    run_dir: Path
    run_id: str
    status: str
    totals: Any
    metrics: dict[str, Any]
    error: str | None

    def _header(self) -> str:
        t = self.totals
        counts = f"{t.conversations} conversations, {t.turns} turns, {t.scores} scores ({t.unscored} unscored)"
        cost = "" if t.cost_usd is None else f", ${t.cost_usd:.4f}"
        error = f"; error: {self.error}" if self.error else ""
        return f"RunResult {self.run_id}: {self.status}; {counts}{cost}{error}"

    def _rows(self) -> list[list[str]]:
        return [
            [m.metric, number(m.mean), interval(m.ci), str(m.n_scored), str(m.n_unscored)]
            for m in self.metrics.values()
        ]

    def __repr__(self) -> str:
        table = text_table(METRIC_HEADER, self._rows()) if self.metrics else "(not scored)"
        return f"{self._header()}\n{table}\n({self.run_dir})"

    def _repr_html_(self) -> str:
        table = html_table(METRIC_HEADER, self._rows()) if self.metrics else "<p>(not scored)</p>"
        return f"<div><p><b>{_esc(self._header())}</b><br><code>{_esc(str(self.run_dir))}</code></p>{table}</div>"

    def to_pandas(self, table: str = "turns") -> Any:
        """The run's ``turns``, ``conversations`` or ``scores`` as a pandas DataFrame (columns: ragdive.notebook.
        frames)."""
        return run_frame(self.run_dir, table)


COMPARISON_HEADER = ["metric", "baseline", "band", "candidate", "change", "better", "n", "unscored", "paired"]


class ComparisonView:
    """Comparison's display: per metric, the baseline and candidate means, the change with its arrow, the paired
    test's verdict."""

    baseline: str
    candidate: str
    metrics: list[Any]

    def _rows(self) -> list[list[str]]:
        rows = []
        for m in self.metrics:
            band = "" if m.band is None else f"{m.band[0]:.3f}-{m.band[1]:.3f}"
            change = "" if m.change is None else f"{m.change:+.3f} {m.arrow}".rstrip()
            better = {True: "better", False: "worse", None: ""}[m.better]
            p = m.paired
            paired = p.verdict + ("" if p.p_value is None else f" (p={p.p_value:.3f}, {p.n_pairs} pairs)")
            rows.append(
                [
                    m.metric,
                    number(m.baseline_mean),
                    band,
                    number(m.mean) + ("*" if m.outside_band else ""),
                    change,
                    better,
                    str(m.n_scored),
                    str(m.n_unscored),
                    paired,
                ]
            )
        return rows

    def _header(self) -> str:
        return f"Comparison: {self.candidate} against {self.baseline}"

    def __repr__(self) -> str:
        return f"{self._header()}\n{text_table(COMPARISON_HEADER, self._rows())}"

    def _repr_html_(self) -> str:
        return html_table(COMPARISON_HEADER, self._rows(), caption=self._header())

    def to_pandas(self) -> Any:
        """One row per metric (columns: ragdive.notebook.frames.COMPARISON_COLUMNS)."""
        return data_frame(comparison_rows(self.baseline, self.candidate, self.metrics), COMPARISON_COLUMNS)


SWEEP_HEADER = ["metric", "repeats", "mean", "std", "95% CI"]


class SweepResultView:
    """SweepResult's display: its status, its runs' statuses and the baseline's Table 2."""

    sweep_dir: Path
    status: str
    runs: dict[str, str]
    tables: dict[str, Any]
    errors: dict[str, str]

    def _header(self) -> str:
        by_status: dict[str, int] = {}
        for status in self.runs.values():
            by_status[status] = by_status.get(status, 0) + 1
        runs = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
        return f"SweepResult {self.sweep_dir.name}: {self.status}; runs: {runs or 'none'}"

    def _rows(self) -> list[list[str]]:
        table2 = self.tables.get("table2") or {}
        return [
            [
                r["metric"],
                str(r["n"]),
                number(r["mean"]),
                number(r["std"]),
                interval((r["ci_low"], r["ci_high"]) if None not in (r.get("ci_low"), r.get("ci_high")) else None),
            ]
            for r in table2.get("rows", [])
        ]

    def _caption(self) -> str:
        table2 = self.tables.get("table2") or {}
        return f"baseline cell {table2.get('cell', '')} (Table 2)"

    def __repr__(self) -> str:
        return f"{self._header()}\n{self._caption()}\n{text_table(SWEEP_HEADER, self._rows())}\n({self.sweep_dir})"

    def _repr_html_(self) -> str:
        return (
            f"<div><p><b>{_esc(self._header())}</b></p>{html_table(SWEEP_HEADER, self._rows(), self._caption())}</div>"
        )

    def to_pandas(self, table: str = "table4") -> Any:
        """``runs`` (run_id, status) or one of tables.json's tables (table2, table4, table5, pass_k) as rows."""
        return sweep_frame(self.runs, self.tables, table)


def _esc(text: str) -> str:
    import html

    return html.escape(text)
