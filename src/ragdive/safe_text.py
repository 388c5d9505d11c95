"""Untrusted text (a target's answers, a corpus file's name or text, a judge's reason, a server's error) made safe
for where ragdive puts it: a terminal, a CSV cell, an xlsx cell.

- Terminal: control characters are shown, not obeyed. An OSC sequence in a file name retitled the terminal, a
  ``CSI 2J`` in a quoted document cleared the screen; now they print as ``\\x1b]0;...``.
- CSV: a cell starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return is a formula to a spreadsheet
  (``=HYPERLINK(...)`` goes live); OWASP's rule (CSV injection) is to prefix it with a single quote, which a
  spreadsheet shows as text. A number (``-0.5``) is left as it is.
- xlsx: the control characters XML 1.0 cannot hold (openpyxl refuses them: a form feed from pdftotext crashed an
  export) are shown as ``\\x0c``, as in the terminal.
"""

from __future__ import annotations

import re

_C0_C1 = "\x00-\x08\x0b-\x1f\x7f-\x9f"
"""Control characters but newline (\\x0a) and tab (\\x09)."""

_ANY_CONTROL = re.compile(f"[{_C0_C1}]")
# what rich itself writes to a terminal: colours (SGR), erase line, cursor moves on a line and up/down, hide/show
# cursor, OSC 8 hyperlinks. A carriage return redraws the progress line.
_RICH_SEQUENCE = re.compile(r"\x1b\[[0-9;]*[mKABCDG]|\x1b\[\?25[lh]|\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\)|\r")


def _show(match: re.Match[str]) -> str:
    return "".join(f"\\x{ord(c):02x}" for c in match.group(0))


def visible_controls(text: str) -> str:
    """Every control character but newline and tab shown as ``\\xNN``: for text that must not drive a terminal."""
    return _ANY_CONTROL.sub(_show, text) if _ANY_CONTROL.search(text) else text


_TERMINAL = re.compile(f"{_RICH_SEQUENCE.pattern}|[{_C0_C1}]")


def terminal_safe(text: str) -> str:
    """What ragdive writes to a terminal: its own styling sequences (those rich writes) kept, every other control
    character shown as ``\\xNN``; a title change, a screen clear or an alternate screen from quoted text is inert."""
    if not _ANY_CONTROL.search(text):
        return text
    return _TERMINAL.sub(lambda m: m.group(0) if _RICH_SEQUENCE.fullmatch(m.group(0)) else _show(m), text)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_safe(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: a string starting with ``= + - @``, tab or CR gets a leading single
    quote (OWASP), unless it is a plain number. Other values are returned as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def xlsx_safe(value: object) -> object:
    """A string openpyxl can store (XML 1.0 has no place for most control characters): those shown as ``\\xNN``."""
    if isinstance(value, str) and _XML_ILLEGAL.search(value):
        return _XML_ILLEGAL.sub(_show, value)
    return value
