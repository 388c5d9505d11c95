"""The gate's verdict as the `gate --json` document (records.outputs.GateJson)."""

from __future__ import annotations

from ..records.outputs import CheckJson, GateJson, Interval, WorstJson
from .checks import GateResult


def gate_json(result: GateResult) -> GateJson:
    return GateJson(
        passed=result.passed,
        checks=[
            CheckJson(
                group=c.group,
                metric=c.metric,
                rule=c.rule,
                passed=c.passed,
                value=c.value,
                ci=Interval.of(c.ci),
                n_scored=c.n_scored,
                n_unscored=c.n_unscored,
                detail=c.detail,
                conversation_id=c.conversation_id,
                worst=[WorstJson(conversation_id=w.conversation_id, value=w.value, run_id=w.run_id) for w in c.worst],
            )
            for c in result.checks
        ],
    )
