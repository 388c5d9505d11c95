"""`ragdive serve-rag CONFIG`: serve the reference RAG over HTTP (loopback by default).

CONFIG is an experiment YAML whose `target` is `type: reference`; the corpus is `target.corpus` or else
`corpus.path`, and the generator is `models.target` (or `models.default`)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..config import ExperimentConfig, ReferenceTargetConfig, load_config
from ..errors import ConfigError
from ..redaction import register_secret
from ..targets.reference.server import MAX_BODY_BYTES

TOKEN_ENV = "RAGDIVE_SERVE_TOKEN"


def build_app(  # type: ignore[no-untyped-def]
    config: ExperimentConfig,
    model_override: str | None = None,
    *,
    token: str | None = None,
    client_session_ids: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
):
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
    app = create_app(rag, token=token, client_session_ids=client_session_ids, max_body_bytes=max_body_bytes)
    return app, rag


def serve_rag(
    config: Path = typer.Argument(..., help="Experiment YAML whose target is `type: reference`."),
    port: int = typer.Option(8765, "--port", "-p", help="Port to listen on (0 picks a free one)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface; the default keeps it on this machine."),
    model: str | None = typer.Option(None, "--model", help="Generator model (provider/model), overriding the config."),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar=TOKEN_ENV,
        show_envvar=True,
        help="Require 'Authorization: Bearer TOKEN' on every request but GET /health.",
    ),
    client_session_ids: bool = typer.Option(
        False,
        "--client-session-ids",
        help="Let clients name sessions (conversation_id); anyone who knows such an id reads its history. "
        "Default: only ids issued by POST /sessions.",
    ),
    max_body_bytes: int = typer.Option(MAX_BODY_BYTES, "--max-body-bytes", min=1, help="Larger bodies get 413."),
) -> None:
    """Serve the reference RAG: POST /chat (sessions or stateless), POST /sessions, /v1/chat/completions."""
    import uvicorn

    if token:
        register_secret(token)  # never printed, whatever prints it
    elif host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"warning: serving on {host} without --token: anyone who can reach it can use it", err=True)
    app, rag = build_app(
        load_config(config),
        model,
        token=token,
        client_session_ids=client_session_ids,
        max_body_bytes=max_body_bytes,
    )
    built = ", ".join(f"{part} {secs:.1f}s" for part, secs in rag.index.build_seconds.items()) or "loaded from disk"
    typer.echo(f"index: {len(rag.index.chunks)} chunks ({built}) at {rag.index.folder}", err=True)
    typer.echo(f"serving {rag.describe()} on http://{host}:{port}", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
