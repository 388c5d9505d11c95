"""The command line's stdout and stderr, made safe in one place: every write has its secrets masked
(redaction.redact_text: the known secrets, credentials in URLs, bearer tokens) and its foreign control characters
shown, not obeyed (safe_text.terminal_safe). Whatever path a text takes to the terminal (a table, a progress line,
an error, a traceback under --debug), it passes here."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..redaction import redact_text
from ..safe_text import terminal_safe, visible_controls


class SafeStream(io.TextIOBase):
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        # a pipe or a file gets no styling from rich at all: every control character there is foreign
        self._safe = terminal_safe if tty else visible_controls

    def write(self, text: str) -> int:
        self._stream.write(self._safe(redact_text(text)))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._stream, "errors", None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def safe_output() -> Iterator[None]:
    """stdout and stderr through SafeStream for the block (the streams it found are put back after)."""
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = SafeStream(stdout)  # type: ignore[assignment]
    sys.stderr = SafeStream(stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = stdout, stderr
