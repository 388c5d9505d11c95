"""The offline demo: a small fictional product corpus and an experiment that binds every role to the packaged
Gemma-3-270M. Only package data and the function that turns it into a config live here; `ragdive demo` runs it
through the pipeline like any experiment."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..config import ExperimentConfig, load_yaml, validate_config
from ..errors import ConfigError

NOTICE = (
    "Gemma-3-270M is a tiny base model: it exercises the whole pipeline offline, but its questions, answers and "
    "scores are not meaningful. For a real evaluation use a capable model (--model ROLE=provider/model)."
)


def _package_path(name: str) -> Path:
    path = Path(str(resources.files(__name__).joinpath(name)))
    if not path.exists():  # a zipped install: the demo reads its corpus from a real folder
        raise ConfigError(f"the demo data {name!r} is not on disk next to the installed package ({path})")
    return path


def demo_config(output: Path) -> ExperimentConfig:
    """The packaged demo experiment with its corpus read from the package, and everything it writes (runs, the
    model-call cache, the reference RAG's index) under ``output``, never inside the installed package."""
    data = load_yaml(_package_path("experiment.yaml"))
    data["corpus"]["path"] = str(_package_path("corpus"))
    data["output_dir"] = str(output)
    data["cache"]["dir"] = str(output / ".cache")
    data["target"]["index_dir"] = str(output / ".cache" / "index")
    return validate_config(data, ExperimentConfig, source="the packaged demo experiment")
