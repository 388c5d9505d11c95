"""``python -m ragdive.testing [--port N] [--api-key K]``: run the stub OpenAI-compatible server on loopback."""

from .stub_server import main

main()
