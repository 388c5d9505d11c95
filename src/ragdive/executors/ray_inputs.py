"""The files a run reads at its config's paths (the corpus, the reference RAG's corpus and persisted index, persona
files), sent to Ray workers through the object store, so that a worker on another node needs nothing at the
driver's paths.

The driver packs every input path that exists on its machine once per executor (``ray.put``: one copy in the
object store, fetched once per node that asks). A worker uses a path as it is when it exists on its node (the
driver's own machine, or a shared filesystem): records and index fingerprints are then exactly a local run's.
Only a path missing on the worker's node is written from the shipped copy into the worker's scratch directory and
the config pointed there. The model-call cache is not shipped: a worker on another node starts with an empty cache
at the configured path (or none with --no-cache), since its entries would not come back to the driver."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import ExperimentConfig, ReferenceTargetConfig

MAX_SHIPPED_BYTES = 2 * 1024**3
"""Above this the inputs are not shipped (a worker then reads them at the driver's paths, as before): the object
store would hold them once per node."""


@dataclass
class ShippedInputs:
    """Every file under each input path, by its absolute path on the driver."""

    files: dict[str, bytes] = field(default_factory=dict)
    roots: list[str] = field(default_factory=list)
    """The input paths themselves (a file or a folder)."""


def input_paths(config: ExperimentConfig) -> list[str]:
    """The paths ``config`` reads inputs from, as written in it."""
    paths = [config.corpus.path] if config.corpus is not None else []
    target = config.target
    if isinstance(target, ReferenceTargetConfig):
        paths += [p for p in (target.corpus, target.index_dir) if p]
    paths += list(config.simulation.persona_files)
    paths += [config.simulation.plans] if config.simulation.plans else []
    return paths


def absolute_inputs(config: ExperimentConfig) -> ExperimentConfig:
    """``config`` with its input paths made absolute on the driver (a worker's working directory is not the
    driver's)."""
    return _with_paths(config, {p: os.path.abspath(p) for p in input_paths(config)})  # symlinks kept as written


def pack(configs: list[ExperimentConfig]) -> ShippedInputs:
    """The files under every input path of ``configs`` that exists here; empty past MAX_SHIPPED_BYTES."""
    shipped = ShippedInputs()
    size = 0
    for root in dict.fromkeys(os.path.abspath(p) for c in configs for p in input_paths(c)):
        path = Path(root)
        if not path.exists():
            continue  # not there yet (an index built by the run): the worker makes it
        shipped.roots.append(root)
        for file in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()):
            data = file.read_bytes()
            size += len(data)
            if size > MAX_SHIPPED_BYTES:
                return ShippedInputs()
            shipped.files[str(file)] = data
    return shipped


def localize(
    config: ExperimentConfig, shipped: ShippedInputs | None, scratch: Path
) -> tuple[ExperimentConfig, dict[str, str]]:
    """``config`` for this node, and what moved: each input path missing here is written from ``shipped`` under
    ``scratch`` and the config points there; a path that exists here is kept."""
    moved: dict[str, str] = {}
    if shipped is None:
        return config, moved
    for path in input_paths(config):
        if os.path.exists(path) or path not in shipped.roots:
            continue
        local = scratch / "inputs" / path.lstrip("/")
        for name, data in shipped.files.items():
            if name == path or name.startswith(path.rstrip("/") + "/"):
                target = scratch / "inputs" / name.lstrip("/")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        if not local.exists():  # a folder shipped empty (an index not built yet)
            local.mkdir(parents=True)
        moved[path] = str(local)
    return (_with_paths(config, moved) if moved else config), moved


def relocated_files(files: dict[str, bytes], moved: dict[str, str]) -> dict[str, bytes]:
    """The driver's files of a run with its manifest's input paths as this node has them (``moved``), so that
    resuming it here checks the run's settings, not where this node keeps the same inputs."""
    if not moved or "manifest.json" not in files:
        return files
    manifest = json.loads(files["manifest.json"])
    config = manifest.get("config") or {}
    corpus, target, simulation = (config.get(k) or {} for k in ("corpus", "target", "simulation"))
    for section, key in ((corpus, "path"), (target, "corpus"), (target, "index_dir")):
        if section.get(key) in moved:
            section[key] = moved[section[key]]
    if simulation.get("persona_files"):
        simulation["persona_files"] = [moved.get(p, p) for p in simulation["persona_files"]]
    if simulation.get("plans") in moved:
        simulation["plans"] = moved[simulation["plans"]]
    return {**files, "manifest.json": json.dumps(manifest).encode()}


def _with_paths(config: ExperimentConfig, moved: dict[str, str]) -> ExperimentConfig:
    """``config`` with each input path in ``moved`` replaced."""

    def new(path: str | None) -> Any:
        return moved.get(path, path) if path else path

    update: dict[str, Any] = {}
    if config.corpus is not None:
        update["corpus"] = config.corpus.model_copy(update={"path": new(config.corpus.path)})
    target = config.target
    if isinstance(target, ReferenceTargetConfig):
        update["target"] = target.model_copy(update={"corpus": new(target.corpus), "index_dir": new(target.index_dir)})
    files = [new(p) for p in config.simulation.persona_files]
    update["simulation"] = config.simulation.model_copy(
        update={"persona_files": files, "plans": new(config.simulation.plans)}
    )
    return config.model_copy(update=update)
