"""Text a candidate controls (messages, file and folder names), made safe for each output:
every invisible character shown as its escape, and each format's own specials escaped."""

from __future__ import annotations

import html as html_lib
import re

from rich.markup import escape as rich_escape

# What may be invisible: anything but tab, newline and printable ASCII (checked one by one).
NOT_ASCII_TEXT = re.compile(r"[^\t\n\x20-\x7e]")
# Default-ignorable characters `str.isprintable` passes: fillers and variation selectors.
IGNORABLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0]")
VARIATION_SELECTORS = range(0xE0100, 0xE01F0)
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")
WORD_JOINER = "\u2060"
AUTOLINKED = re.compile(r"@|://|www\.", re.IGNORECASE)
"""What makes a mention, an address or a bare link in GitHub's Markdown: each is broken after
its first character."""
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def plain(text: str) -> str:
    """`text` with every character that shows nothing, or changes how the rest shows, as its
    `\\u200b`-style escape: controls but tab and newline (terminal escapes, carriage returns),
    format characters (zero-width ones, bidi overrides and isolates), separators but the space,
    surrogates, private-use and unassigned code points, fillers and variation selectors.

    Escaped rather than removed: `con\\u200btrol` is visibly not `control`, so a name cannot pass
    for another in any output, and the instructor sees which character was there. The cost, a
    zero-width joiner or a variation selector of a real name shown as an escape, is small
    beside one candidate's row reading as another's. The escape is always 4 or 8 hex digits,
    never `\\xNN` (a byte that is not UTF-8, in `grader.names.as_text`). Plain text is also
    valid XML 1.0."""
    return NOT_ASCII_TEXT.sub(visible, text)


def visible(match: re.Match[str]) -> str:
    char = match.group()
    if char.isprintable() and not IGNORABLE.match(char) and ord(char) not in VARIATION_SELECTORS:
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def html(text: str) -> str:
    return html_lib.escape(plain(text))


def markdown(text: str) -> str:
    """Literal text in Markdown, on one line: no markup, no raw HTML, no new block, and no
    mention or link GitHub would make live of it (`inert`)."""
    escaped = html_lib.escape(plain(text), quote=False)
    return inert(MARKDOWN_SPECIAL.sub(r"\\\1", escaped).replace("\n", "<br>"))


def inert(text: str) -> str:
    """Markdown whose `@mention` (GitHub notifies who it names), address (`a@b.org`) and bare
    link (`http://`, `www.`) stay text: a word joiner breaks each, as no escape does (GitHub
    finds mentions in the rendered text)."""
    return AUTOLINKED.sub(lambda m: m.group()[0] + WORD_JOINER + m.group()[1:], text)


def csv_cell(text: str) -> str:
    """A cell a spreadsheet shows as text, never evaluates as a formula."""
    text = plain(text)
    return "'" + text if text.startswith(FORMULA_START) else text


def terminal(text: str) -> str:
    """Text rich prints as it is: no markup, no escape sequences."""
    return rich_escape(plain(text))
