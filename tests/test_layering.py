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
    "retrying",
    "json_lines",
    "http_client",
    "case_files",
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
    },
    "cli": {
        "executors",
        "pipeline",
        "simulation",
        "evaluation",
        "targets",
        "models",
        "store",
        "corpus",
        "analysis",
        "demo",
        "report",
        "interop",
        "gate",
        "api",
    },
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


def test_no_package_imports_one_above_it() -> None:
    wrong = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).parts
        package = rel[0].removesuffix(".py")
        if package not in ALLOWED:
            continue  # __init__, __main__ and the top-level helpers
        for target in imported_packages(path) - {package} - SHARED - ALLOWED[package]:
            wrong.append(f"{path.relative_to(ROOT)} imports ragdive.{target}")
    assert not wrong, "\n".join(sorted(wrong))
