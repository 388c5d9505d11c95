from __future__ import annotations

from pydantic import Field

from ._base import Section
from .corpus import CorpusConfig
from .evaluation import EvaluationConfig
from .models import BudgetConfig, CacheConfig, ModelsConfig
from .observability import ObservabilityConfig
from .simulation import SimulationConfig
from .store import StoreConfig
from .target_types import TargetConfig


class ExperimentConfig(Section):
    """A whole experiment: corpus, simulated users, the target, the judge. Loaded from YAML."""

    name: str | None = None
    """Human name, stored in the manifest."""
    seed: int = 0
    """Run seed; conversation seeds derive from it, so a run is repeatable."""
    repeat: int = Field(default=0, ge=0)
    """Which repeat of this experiment. Repeats share the seed documents, personas and plan, but every model call is
    a new sample: the repeat is in each conversation's sampling seed and in every cache key (user, validator,
    target, judge). The same config and repeat again is the same run, served from the cache."""
    output_dir: str = "runs"
    """Folder that receives run directories."""
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    """Models per role."""
    corpus: CorpusConfig | None = None
    """The knowledge base."""
    simulation: SimulationConfig = Field(default_factory=SimulationConfig)
    """Conversation simulation."""
    target: TargetConfig | None = None
    """The RAG system under test."""
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    """Metrics."""
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    """Cost / token cap."""
    cache: CacheConfig = Field(default_factory=CacheConfig)
    """Model-call cache."""
    store: StoreConfig = Field(default_factory=StoreConfig)
    """What the run directory keeps (the cap on stored text)."""
    observability: ObservabilityConfig = Field(default_factory=ObservabilityConfig)
    """Where the run is sent live (an OTLP collector)."""
