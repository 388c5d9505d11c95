"""`ragdive serve-rag CONFIG`: serve the reference RAG over HTTP (loopback by default).

CONFIG is an experiment YAML whose `target` is `type: reference`; the corpus is `target.corpus` or else
`corpus.path`, and the generator is `models.target` (or `models.default`)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..config import ExperimentConfig, ReferenceTargetConfig, load_config
from ..errors import ConfigError


def build_app(config: ExperimentConfig, model_override: str | None = None):  # type: ignore[no-untyped-def]
    from ..corpus import load_documents
    from ..models import apply_model_overrides
    from ..targets.reference import ReferenceRAG, generator_model
    from ..targets.reference.server import create_app

    target = config.target
    if not isinstance(target, ReferenceTargetConfig):
        kind = getattr(target, "type", None)
        raise ConfigError(f"serve-rag needs `target: {{type: reference}}` in the config (found {kind!r})")
    corpus = target.corpus or (config.corpus.path if config.corpus else None)
    if corpus is None:
        raise ConfigError("serve-rag: no corpus (set target.corpus or corpus.path)")
    models = apply_model_overrides(config.models, [f"target={model_override}"]) if model_override else config.models
    spec = models.for_role("target")
    if spec is None:
        raise ConfigError("serve-rag: no generator model (set models.target or models.default, or --model)")
    fmt = "auto" if target.corpus or config.corpus is None else config.corpus.format
    rag = ReferenceRAG(target, load_documents(corpus, format=fmt), generator_model(spec))
    return create_app(rag), rag


def serve_rag(
    config: Path = typer.Argument(..., help="Experiment YAML whose target is `type: reference`."),
    port: int = typer.Option(8765, "--port", "-p", help="Port to listen on (0 picks a free one)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface; the default keeps it on this machine."),
    model: str | None = typer.Option(None, "--model", help="Generator model (provider/model), overriding the config."),
) -> None:
    """Serve the reference RAG: POST /chat (sessions or stateless), POST /sessions, /v1/chat/completions."""
    import uvicorn

    app, rag = build_app(load_config(config), model)
    built = ", ".join(f"{part} {secs:.1f}s" for part, secs in rag.index.build_seconds.items()) or "loaded from disk"
    typer.echo(f"index: {len(rag.index.chunks)} chunks ({built}) at {rag.index.folder}", err=True)
    typer.echo(f"serving {rag.describe()} on http://{host}:{port}", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
