"""Fingerprints of what the simulated user and the validator are sent: their prompt files (of the model's prompt
profile), the check descriptions and the answer schemas. Recorded per run (manifest ``roles``), so that two runs
whose simulator differs are told apart before their targets are compared."""

from __future__ import annotations

import hashlib
import json
from importlib import resources

from ..models.structured import schema_text
from .checks import CHECK_DESCRIPTIONS
from .generator import DraftOutput, EndOrDraftOutput, ProbeDraftOutput
from .validator import VerdictOutput

_FILES = {
    ("user", "chat"): ("generator_system", "generator_turn", "generator_redraft", "generator_unreadable"),
    ("user", "base"): ("base/generator", "base/generator_redraft"),
    ("validator", "chat"): ("validator_system", "validator_user"),
    ("validator", "base"): ("base/validator",),
}
_SCHEMAS = {"user": (DraftOutput, ProbeDraftOutput), "validator": (VerdictOutput,)}


def prompt_fingerprint(role: str, profile: str, stop: str = "fixed") -> str:
    """Twelve hex digits over the role's prompt files, the check descriptions and its schemas. The base profile's
    user schema is built per document from its sentences (base_drafts.py); its rules are covered by the files.
    ``stop: satisfied`` adds the user's ending prompt and schema; ``fixed`` is the fingerprint runs always had."""
    digest = hashlib.sha256(f"{role}:{profile}".encode())
    folder = resources.files(__package__ or "ragdive.simulation").joinpath("prompts")
    for name in _FILES[role, profile]:
        digest.update(folder.joinpath(*f"{name}.md".split("/")).read_text(encoding="utf-8").encode())
    digest.update(json.dumps({str(k): v for k, v in CHECK_DESCRIPTIONS.items()}, sort_keys=True).encode())
    for schema in _SCHEMAS[role]:
        digest.update(schema_text(schema).encode())
    if stop == "satisfied" and role == "user":
        digest.update(folder.joinpath("generator_end.md").read_text(encoding="utf-8").encode())
        digest.update(schema_text(EndOrDraftOutput).encode())
    return digest.hexdigest()[:12]
