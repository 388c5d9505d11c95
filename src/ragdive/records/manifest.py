from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from ._base import Record, utc_now

SCHEMA_VERSION = 7
"""Version of the run-directory format; bump it with a named migration (ragdive.store.migrations) when a reader
would misread old runs. 2: rejection ids, rejections by category and spend per model. 3: runs of kind "replay"
(source_run, note): a ragdive of version 2 would refuse their kind with a confusing error instead of the clear
"upgrade ragdive" one. 4: unknowns as null (totals.rejections, a turn's unanswerable and validator_overruled) and
scores' unscored_kind: a ragdive of version 3 would refuse a null count with a confusing error. 5: status
``incomplete`` (a run that ran to its end without doing its whole job). 6: conversations' ``stop_reason`` and
``user_end_reason`` (simulation.stop: satisfied). 7: turns' ``origin`` and ``instruction`` (steered conversations,
simulation.plans)."""


class ModelSpend(Record):
    """What one role spent on one model over the whole run (every session of it)."""

    role: str
    """user, validator, judge, target ("-" when a call named none)."""
    model: str
    """provider/model."""
    calls: int = 0
    """Requests sent to the model: answered, or failed by its server (HTTP error, timeout, unreadable body); a
    refused connection sent nothing. Cache hits are apart (cached_calls)."""
    cached_calls: int = 0
    """Requests the model cache answered: nothing sent, nothing spent."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    """None as soon as one call had no known price."""
    provider_cached_tokens: int = 0
    """Of prompt_tokens, those the provider served from its prompt cache (a prefix it had seen; see Usage)."""
    retries: int = 0
    """Attempts the model layer repeated after a retryable fault."""
    faults: dict[str, int] = Field(default_factory=dict)
    """Failed attempts by kind (http_429, http_503, timeout, connection, unusable_output...), retried or not."""
    journal_lines: int = 0
    """Lines of the run's spend.jsonl of this role and model already in this line (see store.spend_journal)."""


SPEND_COUNTS = (
    "calls",
    "cached_calls",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "provider_cached_tokens",
    "retries",
    "faults",
)
"""ModelSpend's counted fields, in its order: what the usage ledger keeps running and a journal line carries."""


class ModelLimit(Record):
    """A model's adaptive concurrency (AIMD: halved on 429 / Retry-After, +1 per streak of successes) in the
    latest session that had to back off: how far it went down, and where it ended."""

    model: str
    """provider/model (every role bound to it on one endpoint shares the limit)."""
    max_concurrency: int
    """The configured ceiling."""
    limit: int
    """The limit when this was recorded."""
    lowest: int
    """The lowest it went."""
    backoffs: int = 0
    """Times a 429 (or a Retry-After) halved it."""


class Totals(Record):
    """Counters of a run, written only by the run recorder (ragdive.store.recorder): the counts are recounted
    from the run's files at every write, so they equal the files' content whenever the run was stopped."""

    conversations: int = 0
    """Finished conversations."""
    turns: int = 0
    """Finished turns."""
    rejections: int | None = 0
    """Validator rejections (one per rejection id, of conversations on disk); None: unknown (an imported run
    whose source kept no validator history; read with ``known_rejections``)."""
    rejections_by_category: dict[str, int] = Field(default_factory=dict)
    """Rejections per failed check; a rejection that failed two checks counts under both."""
    errors: int = 0
    """Conversations or turns that ended in an error."""
    prompt_tokens: int | None = 0
    """Prompt tokens over all roles; None when unknown (an imported run whose source did not record them)."""
    completion_tokens: int | None = 0
    """Completion tokens over all roles; None when unknown."""
    cost_usd: float | None = None
    """Total cost; None when any price was unknown."""
    spend: list[ModelSpend] = Field(default_factory=list)
    """Tokens and cost per role and model (empty in runs written before ragdive recorded it)."""
    limits: list[ModelLimit] = Field(default_factory=list)
    """Models whose adaptive concurrency had to back off (none: every model ran at its max_concurrency)."""
    scores: int = 0
    """Scores written to evaluations.jsonl."""
    unscored: int = 0
    """Scores the judge could not give."""


class RoleSetup(Record):
    """How one role's model was set up in a run. Besides the target under test, these move a run's scores: two
    runs whose user or validator differ in any of them are not a clean comparison of their targets."""

    model: str
    """provider/model."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Generation parameters sent with every call (the role's defaults under the config's ``params``)."""
    prompt_profile: str | None = None
    """chat or base: which prompt files the role sent."""
    prompts: str | None = None
    """Fingerprint (12 hex digits) of the prompt files, check descriptions and answer schema the role sent; None
    where the prompts are recorded elsewhere (the judge's: per metric, on each score)."""


def known_rejections(manifest: RunManifest) -> int | None:
    """The run's rejection count, or None when unknown: an imported run's source kept no validator history (runs
    imported before ``Totals.rejections`` could say None have 0 there, which is just as unknown)."""
    t = manifest.totals
    if t.rejections is None or (manifest.kind == "imported" and not t.rejections and not t.rejections_by_category):
        return None
    return t.rejections


class Alarm(Record):
    """One validity alarm: a share of the run past the threshold where its numbers would mislead a reader."""

    code: str
    """Stable name: overruled_share, judge_failure_share, error_share, no_context_share, seed_reuse_share,
    empty_metric."""
    message: str
    """What it means, in one sentence with the counts."""
    value: float | None = None
    """The run's share (None for empty_metric)."""
    threshold: float | None = None
    """The configured threshold it passed."""


class RunProcess(Record):
    """The process that last started or resumed a run: lets a reader tell a live run from one whose process
    died without saying so (see ragdive.store.liveness)."""

    pid: int
    """Process id."""
    host: str
    """Host name (a pid means nothing on another machine)."""
    start_ticks: int | None = None
    """Process start time in clock ticks since boot (/proc/<pid>/stat), where readable: tells a reused pid."""
    boot_id: str | None = None
    """Linux boot id, where readable: after a reboot no process of before is alive."""


class SourceFile(Record):
    """One file an imported run was read from."""

    name: str
    """The file's name as given (its folder is left out: no machine paths in a run)."""
    sha256: str
    """Hex digest of its bytes, so a reader can check which file it was."""
    role: str = ""
    """What the importer read from it: conversations, single-turn scores, multi-turn scores, samples..."""


class Provenance(Record):
    """Where an imported run came from (manifest kind ``imported``)."""

    source_format: str
    """The importer's format name (ragdive-reference, ragas, deepeval)."""
    importer_version: int
    """Version of that importer: bumped when it would read the same files differently."""
    files: list[SourceFile] = Field(default_factory=list)
    """Every file read, with its digest."""
    shape: Literal["conversations", "single-turn"] = "conversations"
    """conversations: multi-turn dialogues; single-turn: one question per item (a static set)."""
    invented: list[str] = Field(default_factory=list)
    """Every value the importer had to make up because the source has no such thing (ids, seeds, times...), one
    sentence each. Values the source did not give and ragdive need not invent stay unknown instead."""
    notes: list[str] = Field(default_factory=list)
    """What else a reader should know (types mapped to unknown, rows left unscored and why)."""


class RunManifest(Record):
    """manifest.json: what a run is, how it was configured, and where it got to."""

    schema_version: int = SCHEMA_VERSION
    """Run-directory format version."""
    run_id: str
    """Unique, sortable id (also the directory name)."""
    name: str | None = None
    """Optional human name from the config."""
    kind: Literal["dynamic", "static", "replay", "imported"] = "dynamic"
    """dynamic: simulated conversations; static: one question per item from a dataset; replay: the recorded user
    messages of another run (``source_run``) sent to another target; imported: another tool's run read into
    ragdive's format (see provenance)."""
    source_run: str | None = None
    """The run whose user messages a replay sent (its run id); None for other kinds."""
    note: str | None = None
    """What a reader must know to read the run right (a replay: its limit)."""
    created: datetime = Field(default_factory=utc_now)
    """Creation time (UTC)."""
    updated: datetime = Field(default_factory=utc_now)
    """Last manifest write (UTC)."""
    status: Literal["created", "running", "finished", "incomplete", "failed", "interrupted", "budget_exceeded"] = (
        "created"
    )
    """Where the run got to. finished: the whole job done; incomplete: it ran to its end but conversations are in
    error or items unscored because the judge failed (counts in ``error``; resume / evaluate --retry-failed)."""
    config: dict[str, Any] = Field(default_factory=dict)
    """The resolved config, secrets redacted."""
    models: dict[str, str] = Field(default_factory=dict)
    """provider/model per role (user, validator, judge, target)."""
    roles: dict[str, RoleSetup] = Field(default_factory=dict)
    """Each role's model, parameters and prompt fingerprint (empty in runs written before ragdive recorded it)."""
    target: str | None = None
    """Short description of the system under test."""
    seed: int | None = None
    """Run seed; each conversation's seed derives from it."""
    package_version: str = ""
    """ragdive version that wrote the run."""
    totals: Totals = Field(default_factory=Totals)
    """Counters."""
    error: str | None = None
    """Why the run failed, when it did."""
    process: RunProcess | None = None
    """Who runs it (or ran it last); absent in manifests written before ragdive recorded it."""
    provenance: Provenance | None = None
    """Where an imported run came from; None for runs ragdive made itself."""
    alarms: list[Alarm] | None = None
    """Validity alarms computed from the run's files when it was last scored (None: not computed yet)."""
