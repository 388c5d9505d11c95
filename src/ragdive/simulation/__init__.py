"""Simulation stage: personas, the conversation generator (user model), the validator, the per-conversation loop
and the concurrent runner that writes conversations to the run store."""

from .checks import DocumentIndex, deterministic_checks, mentions_document
from .dialogue import ConversationPlan, DialogueResult, DialogueSettings, Observer, run_dialogue
from .generator import DraftOutput, Generator
from .launch import seed_documents, seed_sampler
from .personas import available_personas, builtin_personas, load_persona_file, resolve_personas
from .runner import RunObserver, RunOutcome, Shard, SimulationRunner, conversation_seed_and_id, plan_conversations
from .validator import Validator, VerdictOutput

__all__ = [
    "ConversationPlan",
    "DialogueResult",
    "DialogueSettings",
    "DocumentIndex",
    "DraftOutput",
    "Generator",
    "Observer",
    "RunObserver",
    "RunOutcome",
    "Shard",
    "SimulationRunner",
    "Validator",
    "VerdictOutput",
    "available_personas",
    "builtin_personas",
    "conversation_seed_and_id",
    "deterministic_checks",
    "load_persona_file",
    "mentions_document",
    "plan_conversations",
    "resolve_personas",
    "run_dialogue",
    "seed_documents",
    "seed_sampler",
]
