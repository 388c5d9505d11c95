"""The reference RAG as an HTTP app (`ragdive serve-rag`): built from an experiment config whose target is
`type: reference`; the corpus is `target.corpus` or else `corpus.path`, the generator `models.target` (or
`models.default`), from a resolved config (the API applies `--model`)."""

from __future__ import annotations

from ..config import ExperimentConfig, ReferenceTargetConfig
from ..errors import ConfigError
from ..targets.reference.server import MAX_BODY_BYTES


def build_app(  # type: ignore[no-untyped-def]
    config: ExperimentConfig,
    *,
    token: str | None = None,
    client_session_ids: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
):
    from ..corpus import load_documents
    from ..targets.reference import ReferenceRAG, generator_model
    from ..targets.reference.server import create_app

    target = config.target
    if not isinstance(target, ReferenceTargetConfig):
        kind = getattr(target, "type", None)
        raise ConfigError(f"serve-rag needs `target: {{type: reference}}` in the config (found {kind!r})")
    corpus = target.corpus or (config.corpus.path if config.corpus else None)
    if corpus is None:
        raise ConfigError("serve-rag: no corpus (set target.corpus or corpus.path)")
    spec = config.models.for_role("target")
    if spec is None:
        raise ConfigError("serve-rag: no generator model (set models.target or models.default, or --model)")
    fmt = "auto" if target.corpus or config.corpus is None else config.corpus.format
    rag = ReferenceRAG(target, load_documents(corpus, format=fmt), generator_model(spec))
    app = create_app(rag, token=token, client_session_ids=client_session_ids, max_body_bytes=max_body_bytes)
    return app, rag
