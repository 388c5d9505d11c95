"""The CI gate: thresholds and allowed drops checked against runs, as a verdict, JUnit XML and a Markdown summary.

Reads runs (store, analysis); writes only the report files it is asked for. The exit code of a failed gate is
EXIT_GATE_FAILED, distinct from a user error (2), a spent budget (3) and an interruption (130/143).
"""

from .checks import (
    Check,
    GateResult,
    Worst,
    check_drop,
    check_rule,
    drop_verdict,
    evaluate_gate,
    worst_conversations,
)
from .junit import junit_xml, write_junit
from .markdown import markdown_summary, write_markdown
from .output import gate_json
from .sources import group_name, load_groups, load_runs

EXIT_GATE_FAILED = 6
"""`ragdive gate`, `run --gate`, `compare --fail-on-regression`: a check failed (the run itself is fine)."""

__all__ = [
    "EXIT_GATE_FAILED",
    "Check",
    "GateResult",
    "Worst",
    "check_drop",
    "check_rule",
    "drop_verdict",
    "evaluate_gate",
    "gate_json",
    "group_name",
    "junit_xml",
    "load_groups",
    "load_runs",
    "markdown_summary",
    "worst_conversations",
    "write_junit",
    "write_markdown",
]
