"""A small valid instance of a JSON schema, so the stub server can answer any structured request."""

from __future__ import annotations

from typing import Any


def example_for_schema(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """Minimal value satisfying the common JSON-schema subset pydantic emits ($ref/$defs, anyOf, enum, const,
    objects with required properties, arrays with minItems, strings, numbers, booleans, null)."""
    root = root if root is not None else schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return example_for_schema(root.get("$defs", {}).get(name, {}), root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
            return example_for_schema(options[0], root)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: example_for_schema(sub, root) for name, sub in props.items()}
    if kind == "array":
        item = example_for_schema(schema.get("items", {}), root)
        return [item] * int(schema.get("minItems", 0))
    if kind == "string":
        return "x" * int(schema.get("minLength", 0)) or "stub"
    if kind in ("integer", "number"):
        value = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        if "exclusiveMinimum" in schema and "minimum" not in schema:
            value += 1
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    return None
