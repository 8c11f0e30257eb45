"""Text a candidate controls (messages, file and folder names), made safe for each output:
control characters removed everywhere, and each format's own specials escaped."""

from __future__ import annotations

import html as html_lib
import re

from rich.markup import escape as rich_escape

# C0 controls but tab and newline, DEL, C1 controls: terminal escapes, carriage returns, NUL.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# What XML 1.0 forbids beyond the controls: surrogates and the two non-characters.
XML_ILLEGAL = re.compile("[\ud800-\udfff\ufffe\uffff]")
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
REPLACEMENT = "\ufffd"


def plain(text: str) -> str:
    return CONTROL.sub(REPLACEMENT, text)


def xml(text: str) -> str:
    return XML_ILLEGAL.sub(REPLACEMENT, plain(text))


def html(text: str) -> str:
    return html_lib.escape(plain(text))


def markdown(text: str) -> str:
    """Literal text in Markdown, on one line: no markup, no raw HTML, no new block."""
    escaped = html_lib.escape(plain(text), quote=False)
    return MARKDOWN_SPECIAL.sub(r"\\\1", escaped).replace("\n", "<br>")


def csv_cell(text: str) -> str:
    """A cell a spreadsheet shows as text, never evaluates as a formula."""
    text = plain(text)
    return "'" + text if text.startswith(FORMULA_START) else text


def terminal(text: str) -> str:
    """Text rich prints as it is: no markup, no escape sequences."""
    return rich_escape(plain(text))
