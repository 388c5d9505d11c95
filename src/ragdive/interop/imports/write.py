"""``import_run``: read another tool's files with the format's importer, then write one run of kind ``imported``
through the run store. Every file is read and checked before anything is written, and the run is written in a
staging folder and renamed into place, so neither a bad file nor a kill leaves a half-imported run behind."""

from __future__ import annotations

import hashlib
import secrets
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...errors import ConfigError, StoreError
from ...records import Provenance, SourceFile, Totals
from ...registry import Registry
from ...store import RunStore
from ...store.session import RunSession
from .base import ImportedRun
from .chatlog import NAME as CHATLOG
from .chatlog import VERSION as CHATLOG_VERSION
from .chatlog import read_chatlog
from .reference import NAME as REFERENCE
from .reference import VERSION as REFERENCE_VERSION
from .reference import read_reference
from .samples import DEEPEVAL, DEEPEVAL_VERSION, RAGAS, RAGAS_VERSION, read_deepeval, read_ragas


@dataclass(frozen=True)
class Importer:
    name: str
    version: int
    """Bumped when the importer would read the same files differently."""
    read: Callable[[list[Path]], ImportedRun]
    summary: str


IMPORTERS: Registry[Importer] = Registry(
    "importers",
    noun="import format",
    builtins={
        i.name: i
        for i in (
            Importer(
                REFERENCE, REFERENCE_VERSION, read_reference, "RAG-DIVE reference output: conversations + evaluations"
            ),
            Importer(RAGAS, RAGAS_VERSION, read_ragas, "Ragas EvaluationDataset JSONL (single- or multi-turn samples)"),
            Importer(DEEPEVAL, DEEPEVAL_VERSION, read_deepeval, "DeepEval LLMTestCase / ConversationalTestCase JSON"),
            Importer(CHATLOG, CHATLOG_VERSION, read_chatlog, "chat log JSONL: messages with contexts per answer"),
        )
    },
)
"""The one registry of import formats; a plug-in adds one with an entry point in ``ragdive.importers`` naming an
Importer."""


def importer(name: str) -> Importer:
    return IMPORTERS.get(name)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def import_run(
    source_format: str,
    files: Sequence[Path | str],
    output: Path | str,
    *,
    name: str | None = None,
    prepare: Callable[[ImportedRun], None] | None = None,
) -> RunStore:
    """Import ``files`` (of ``source_format``) as the run directory ``output`` (which must not exist).
    ``prepare`` may complete the records once read, before anything is written (a chat log's stand-alone
    rewrites)."""
    chosen = importer(source_format)
    paths = [Path(f) for f in files]
    if not paths:
        raise ConfigError(f"import {source_format}: give at least one file")
    if len({p.name for p in paths}) != len(paths):
        raise ConfigError("import: two files share a name; the manifest tells files apart by name")
    run = chosen.read(paths)  # everything is read and checked before anything is written
    if not run.conversations:
        raise ConfigError(f"import {source_format}: the files hold no conversations")
    if output is not None and Path(output).exists():
        raise StoreError(f"run directory {output} already exists")  # before prepare spends any model call
    if prepare is not None:
        prepare(run)
    provenance = Provenance(
        source_format=chosen.name,
        importer_version=chosen.version,
        files=[SourceFile(name=p.name, sha256=sha256_of(p), role=run.roles.get(p.name, "")) for p in paths],
        shape="single-turn" if run.shape == "single-turn" else "conversations",
        invented=run.invented,
        notes=run.notes,
    )
    output = Path(output)
    if output.exists():
        raise StoreError(f"run directory {output} already exists")
    # written in a staging folder beside the target and moved into place in one rename: a kill mid-import
    # leaves no half-imported run where readers look (only the hidden staging folder, which a rerun ignores)
    staging = output.parent / f".{output.name}.importing-{secrets.token_hex(3)}"
    try:
        store = RunStore.create(
            staging,
            run_id=output.name,
            name=name,
            kind="imported",
            target=f"imported from {chosen.name}",
            provenance=provenance,
            # the source recorded no tokens: unknown, never 0; nor rejections, unless it came with validator logs
            # (then the recorder counts the imported ones; None is kept through later sessions)
            totals=Totals(
                prompt_tokens=None, completion_tokens=None, cost_usd=None, rejections=0 if run.rejections else None
            ),
        )
        store.append_rejections(run.rejections)  # before their conversations, as a simulation writes them
        store.append_conversations(run.conversations)
        store.append_scores(run.scores)
        RunSession(store).conclude()  # an import is whole once its lines are written: finished
        published = store.publish(output)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return published
