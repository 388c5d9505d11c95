"""`ragdive serve-rag CONFIG`: serve the reference RAG over HTTP (loopback by default).

CONFIG is an experiment YAML whose `target` is `type: reference`; the corpus is `target.corpus` or else
`corpus.path`, and the generator is `models.target` (or `models.default`)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..api.serving import MAX_BODY_BYTES, build_app
from ..config import load_config
from ..redaction import register_secret

__all__ = ["build_app", "serve_rag"]

TOKEN_ENV = "RAGDIVE_SERVE_TOKEN"


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
