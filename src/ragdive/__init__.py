"""ragdive: evaluate RAG systems through simulated multi-turn conversations.

The Python API (`run`, `simulate`, `evaluate`, `static`, `replay`, `sweep` and their `a...` coroutines, `compare`,
`load_run`, `list_runs`, `import_run`, `assert_gate`, their result types and `Observer`) lives in `ragdive.api` and
is imported on first use, so `import ragdive` stays cheap (no models, numpy or rich until a run needs them).
`gate` is `ragdive.api.gate` only: the subpackage ragdive.gate takes that attribute of this package as soon as it is
imported (by `assert_gate`, say), so a top-level `ragdive.gate` would be a function or a module depending on what
ran before.
"""

from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import (
    ConfigError,
    JudgeError,
    ModelError,
    ModelOutputError,
    RagdiveError,
    StoreError,
    TargetError,
)

if TYPE_CHECKING:
    from .api import (
        Comparison,
        MetricResult,
        Observer,
        RunResult,
        SweepResult,
        aevaluate,
        areplay,
        arun,
        asimulate,
        assert_gate,
        astatic,
        asweep,
        compare,
        evaluate,
        import_run,
        list_runs,
        load_run,
        replay,
        run,
        simulate,
        static,
        sweep,
    )


def __getattr__(name: str) -> Any:
    """The API's names, imported on first use (the names defined above never reach here)."""
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'ragdive' has no attribute {name!r}")


__all__ = [
    "Comparison",
    "ConfigError",
    "JudgeError",
    "MetricResult",
    "Observer",
    "ModelError",
    "ModelOutputError",
    "RagdiveError",
    "RunResult",
    "StoreError",
    "SweepResult",
    "TargetError",
    "__version__",
    "aevaluate",
    "areplay",
    "arun",
    "asimulate",
    "astatic",
    "assert_gate",
    "asweep",
    "compare",
    "evaluate",
    "import_run",
    "list_runs",
    "load_run",
    "replay",
    "run",
    "simulate",
    "static",
    "sweep",
]
