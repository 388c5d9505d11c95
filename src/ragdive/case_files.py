"""One reader for the other tools' question and test-case files (DeepEval's JSON, Ragas's rows): `ragdive import`
(interop) and `ragdive static` (evaluation) both read them here, so the two accept the same shapes.

- a JSON list of objects, or one under ``test_cases`` or ``goldens`` (DeepEval's dataset files);
- field names in snake_case or as DeepEval's own ``model_dump(by_alias=True)`` writes them (camelCase:
  ``actualOutput``, ``retrievalContext``, ``expectedOutput``, ``additionalMetadata``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .errors import ConfigError

_CAMEL = re.compile(r"(?<=[a-z0-9])[A-Z]")


def snake_keys(fields: dict[str, Any]) -> dict[str, Any]:
    """The keys of this level as snake_case (``retrievalContext`` -> ``retrieval_context``); values, metadata above
    all, are kept as written."""
    return {_CAMEL.sub(lambda m: "_" + m.group(0).lower(), str(key)): value for key, value in fields.items()}


def case_rows(path: Path, *, what: str = "dataset") -> list[dict[str, Any]]:
    """The objects of a DeepEval-style JSON file, their keys (and their turns' keys) in snake_case."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{what} {path} does not exist") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc}") from exc
    if isinstance(data, dict):
        data = data.get("test_cases", data.get("testCases", data.get("goldens")))
    if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
        raise ConfigError(f'{what} {path}: expected a JSON list of objects (or {{"test_cases": [...]}} / goldens)')
    rows = []
    for row in data:
        row = snake_keys(row)
        if isinstance(row.get("turns"), list):
            row["turns"] = [snake_keys(t) if isinstance(t, dict) else t for t in row["turns"]]
        rows.append(row)
    return rows
