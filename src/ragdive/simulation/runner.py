"""The concurrent runner: many conversations at once (bounded), turns in order within each, every finished
conversation written to the run store at once, resumable.

Stopping: BudgetExceeded from the model layer ends the work with outcome ``budget_exceeded``; cancellation or
Ctrl-C is raised (the run's session, ragdive.store.session, writes ``interrupted``). Either way the conversations
in flight are dropped (never written half-done) and everything finished is already on disk, so ``--resume``
continues where the run stopped. An error inside
one conversation is recorded on it (status ``error``) and the others go on; a resumed run does not retry it.
A target that fails TARGET_FAILURES_BEFORE_STOP times without one answer stops the run with a TargetError
(the session writes ``failed``; the rule, shared with static mode, is `ragdive.targets.watch`).

Rejections are written with their conversation, just before it (a conversation that is dropped and redone after
a resume would otherwise leave duplicates). A kill between those two writes leaves that conversation's rejections
on disk without it; the resumed run redoes the conversation and writes them again under the same ids, and every
reader keeps one line per id (ragdive.store.latest), so nothing is lost or counted twice.

The manifest's status and totals are the run recorder's (ragdive.store.recorder): it recounts them from the files
at every write, and adds what this session's models spent.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

from ..corpus.sampling import SeedSampler
from ..errors import BudgetExceeded
from ..models import UsageLedger
from ..records import Conversation, ModelLimit, ModelSpend, Persona, Totals, Turn, Usage
from ..store import RunRecorder, RunStore
from ..targets import Target
from ..targets.watch import TargetWatch
from .dialogue import ConversationPlan, DialogueSettings, Observer, run_dialogue
from .generator import Generator
from .validator import Validator

RECORD_EVERY_S = 1.0
"""The manifest's counts and spend are rewritten at most this often while conversations finish (and at the start
and end): a write re-reads and fsyncs it (~3 ms, 200 of them in a 200 x 5 run). A kill between writes loses
nothing: counts are recounted from the files and spend from spend.jsonl (store.recorder)."""


def conversation_seed_and_id(run_seed: int, index: int, repeat: int = 0) -> tuple[int, str]:
    """Deterministic per (run seed, index): a resumed run finds the same ids. The seed fits in 32 bits, which
    every backend's ``seed`` parameter accepts. A repeat keeps the id (repeats of a conversation pair by it) but
    gets its own sampling seed; repeat 0 is the seed runs always had."""
    digest = hashlib.sha256(f"ragdive-conversation:{run_seed}:{index}".encode()).digest()
    seed = int.from_bytes(digest[:4], "big")
    if repeat:
        seed = int.from_bytes(hashlib.sha256(f"ragdive-repeat:{seed}:{repeat}".encode()).digest()[:4], "big")
    return seed, f"c{index:04d}-{digest[4:7].hex()}"


@dataclass(frozen=True)
class Shard:
    """One of ``count`` disjoint parts of a run's conversations (conversation i belongs to part i mod count): a
    distributed run simulates and scores each part in a worker of its own (ragdive.executors.ray_shards)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index} of {self.count}")

    def holds(self, conversation_index: int) -> bool:
        return conversation_index % self.count == self.index


def plan_conversations(
    count: int, *, run_seed: int, personas: list[Persona], sampler: SeedSampler, repeat: int = 0
) -> list[ConversationPlan]:
    """Conversation i gets persona i mod len(personas) and the seed document(s) the sampler draws for i."""
    plans = []
    for index in range(count):
        seed, cid = conversation_seed_and_id(run_seed, index, repeat)
        documents = sampler.for_conversation(index)
        plans.append(
            ConversationPlan(
                index=index,
                id=cid,
                seed=seed,
                persona=personas[index % len(personas)],
                documents=documents,
                shared_terms=sampler.shared_terms(documents),
            )
        )
    return plans


class RunObserver(Observer):
    """Observer of a whole run: also told when the run starts and when a conversation is written."""

    def started(self, total: int, already_done: int, totals: Totals) -> None:
        """``totals`` holds what a resumed run had already written."""

    def conversation(self, conversation: Conversation, totals: Totals) -> None: ...


@dataclass
class RunOutcome:
    status: str
    totals: Totals
    error: str | None = None


class SimulationRunner:
    def __init__(
        self,
        *,
        store: RunStore,
        plans: list[ConversationPlan],
        generator: Generator,
        validator: Validator,
        target: Target,
        settings: DialogueSettings,
        concurrency: int = 4,
        observer: RunObserver | None = None,
    ) -> None:
        self.store = store
        self.plans = plans
        self.generator = generator
        self.validator = validator
        self.target = target
        self.settings = settings
        self.concurrency = concurrency
        self.observer = observer or RunObserver()
        self.recorder = RunRecorder(store)
        self.totals = Totals()
        self._recorded_at = 0.0
        # one ledger per distinct model context (a real run shares one; tests may build separate models)
        contexts = {id(m.context): m.context for m in (generator.model, validator.model)}
        self.ledgers: list[UsageLedger] = [c.ledger for c in contexts.values()]
        for ledger in self.ledgers:
            self.recorder.attach(ledger)  # every request's spend on disk as it is counted (store.spend_journal)
        self._contexts = list(contexts.values())
        self._models = list({id(m.context): m for m in (generator.model, validator.model)}.values())
        """One model per distinct context: settling its cache settles every role's on that context."""
        self._watch = TargetWatch(len(plans), saved="finished conversations are saved")
        #: awaited before the first conversation (set by launch: the local models' self-check)
        self.preflight: Callable[[], Awaitable[object]] | None = None
        #: told each conversation once its line is on disk (the pipeline scores it while others are simulated)
        self.on_written: Callable[[Conversation], None] | None = None
        #: told each turn once it is answered, before its conversation is written (the pipeline judges it early)
        self.on_answered: Callable[[Conversation, Turn], None] | None = None

    async def run(self) -> RunOutcome:
        """Run every planned conversation not yet in the store. Returns how the run ended (finished, or
        budget_exceeded); raises cancellation and failures. The run's status is its session's to write
        (ragdive.store.session): this stage records counts and spend only."""
        done = self._resume()
        todo = [p for p in self.plans if p.id not in done]
        self.totals = self.recorder.record(spend=self.session_spend()).totals
        self.observer.started(len(self.plans), len(self.plans) - len(todo), self.totals.model_copy())
        if self.preflight is not None:
            await self.preflight()  # the local model's self-check: a broken build fails here, in seconds
        queue = iter(todo)
        self._watch = TargetWatch(len(todo), saved="finished conversations are saved")
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(self.concurrency, len(todo))):
                    group.create_task(self._worker(queue))
        except BaseExceptionGroup as group_error:
            budget = _first(group_error, BudgetExceeded)
            if budget is not None:
                return self._outcome("budget_exceeded", f"budget exceeded: {budget}")
            first = _first(group_error, BaseException)
            raise first from group_error  # type: ignore[misc]
        except KeyboardInterrupt as exc:
            # A KeyboardInterrupt inside a conversation has already left the event loop (asyncio re-raises it
            # from the task that got it); the TaskGroup hands it to us again while asyncio.run cancels
            # everything. End this task as cancelled: raising it twice only leaves an unretrieved-task warning.
            raise asyncio.CancelledError from exc
        return self._outcome("finished", None)

    async def _worker(self, queue: Iterator[ConversationPlan]) -> None:
        # one shared iterator: the event loop runs one worker at a time between awaits, so next() is safe
        for plan in queue:
            result = await run_dialogue(
                plan,
                generator=self.generator,
                validator=self.validator,
                target=self.target,
                settings=self.settings,
                observer=self.observer,
                on_answered=self.on_answered,
            )
            for model in self._models:
                await model.settled()  # the answers it was made from are in the cache before the line counts
            # no await from here on: a cancellation cannot leave a conversation half-written
            self.store.append_rejections(result.rejections)  # one fsync for all of them
            self.store.append_conversation(result.conversation)
            if time.monotonic() - self._recorded_at >= RECORD_EVERY_S:
                self.totals = self.recorder.record(spend=self.session_spend(), limits=self.session_limits()).totals
                self._recorded_at = time.monotonic()
            self.observer.conversation(result.conversation, self.totals)
            if self.on_written is not None:
                self.on_written(result.conversation)
            self._watch.saw(result.conversation)  # the target down: TargetError, the run stops as failed

    def _resume(self) -> set[str]:
        """The ids a previous session already wrote. What earlier sessions spent counts against the budget: it
        caps the whole run, not each session."""
        previous = self.store.read_manifest().totals
        if self.ledgers:
            # None (unknown: an imported run's source did not record tokens) carries nothing known over
            prompt, completion = previous.prompt_tokens or 0, previous.completion_tokens or 0
            spent = prompt + completion > 0
            self.ledgers[0].carry_over(
                Usage(
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    cost_usd=previous.cost_usd if spent else 0.0,
                )
            )
        return self.store.finished_conversation_ids()

    def session_spend(self) -> list[ModelSpend]:
        """What this session's models spent so far: every call, including failed drafts, corrective retries and
        conversations that were dropped; cache hits cost nothing."""
        # the judge may share this ledger (a pipeline scores while simulating): its spend is the evaluator's to record
        return [line for ledger in self.ledgers for line in ledger.spend() if line.role != "judge"]

    def session_limits(self) -> list[ModelLimit]:
        """The adaptive concurrency limits that backed off this session (every limiter of these contexts)."""
        return [limit for context in self._contexts for limit in context.limits()]

    def _outcome(self, status: str, error: str | None) -> RunOutcome:
        """How the work ended, with everything spent recorded (the session's final write adds nothing to it)."""
        self.totals = self.recorder.record(spend=self.session_spend(), limits=self.session_limits()).totals
        return RunOutcome(status=status, totals=self.totals, error=error)


def _first(group: BaseExceptionGroup, kind: type[BaseException]) -> BaseException | None:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found = _first(exc, kind)
            if found is not None:
                return found
        elif isinstance(exc, kind):
            return exc
    return None
