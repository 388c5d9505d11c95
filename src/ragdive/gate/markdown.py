"""The gate as GitHub-flavoured Markdown (`--summary-md FILE`), the format CI step summaries display (append it to
``$GITHUB_STEP_SUMMARY``): a verdict line, one table row per check, the worst conversations of each failure."""

from __future__ import annotations

from pathlib import Path

from .checks import Check, GateResult


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _value(check: Check) -> str:
    return "unknown" if check.value is None else f"{check.value:.3f}"


def _ci(check: Check) -> str:
    return "–" if check.ci is None else f"[{check.ci[0]:.3f}, {check.ci[1]:.3f}]"


def markdown_summary(result: GateResult, *, title: str = "ragdive gate") -> str:
    n_fail = len(result.failures)
    verdict = "passed" if result.passed else f"failed: {n_fail} of {len(result.checks)} checks"
    lines = [f"## {title}: {'✅' if result.passed else '❌'} {verdict}", ""]
    lines += [
        "| | run | metric | rule | value | 95% CI | scored | unscored | detail |",
        "|---|---|---|---|---:|---|---:|---:|---|",
    ]
    for c in result.checks:
        rule = c.rule + (f" [{c.conversation_id}]" if c.conversation_id else "")
        lines.append(
            "| "
            + " | ".join(
                [
                    "✅" if c.passed else "❌",
                    _cell(c.group),
                    _cell(c.metric),
                    _cell(rule),
                    _value(c),
                    _ci(c),
                    str(c.n_scored),
                    str(c.n_unscored),
                    _cell(c.detail),
                ]
            )
            + " |"
        )
    worst = [c for c in result.failures if c.worst]
    if worst:
        lines += ["", "### Worst conversations", ""]
        for c in worst:
            names = ", ".join(f"`{w.conversation_id}` ({w.value:.3f})" for w in c.worst)
            lines.append(f"- {_cell(c.group)} · {c.metric} {c.rule}: {names}")
    return "\n".join(lines) + "\n"


def write_markdown(result: GateResult, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(markdown_summary(result), encoding="utf-8")
