"""The gate's verdict as an assertion message (`ragdive.assert_gate`, the pytest plugin): each failed check with
its metric, value, CI, counts and the conversations that pulled it down, so a red test says what to look at."""

from __future__ import annotations

from .checks import Check, GateResult


def _check_line(c: Check) -> list[str]:
    value = "unknown" if c.value is None else f"{c.value:.3f}"
    ci = f"95% CI {c.ci[0]:.3f}-{c.ci[1]:.3f}, " if c.ci else "no CI, "
    where = f" ({c.group})" if c.group else ""
    lines = [f"  {c.name}{where}: {value} ({ci}{c.n_scored} scored, {c.n_unscored} unscored): {c.detail}"]
    if c.worst:
        names = ", ".join(f"{w.conversation_id} ({w.value:.3f})" for w in c.worst)
        lines.append(f"    worst conversations: {names} in {c.worst[0].run_id}")
    return lines


def failure_message(result: GateResult) -> str:
    failures = result.failures
    lines = [f"ragdive gate failed: {len(failures)} of {len(result.checks)} checks"]
    for check in failures:
        lines += _check_line(check)
    return "\n".join(lines)
