"""Design strings made safe for the files the report writes.

A design file is input: its names, ids and models can hold anything a JSON string can. Two
outputs read such strings as more than text:

* **Spreadsheets** (CSV): a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or
  carriage return before one) is run as a formula by Excel, LibreOffice Calc and Google Sheets
  ("CSV injection", OWASP: https://owasp.org/www-community/attacks/CSV_Injection). OWASP's
  remedy is used: such a cell gets a leading apostrophe, which the spreadsheet shows as text.
  A plain number (``-3``, ``+1.5``) is left as it is: no spreadsheet runs it.
* **XML** (SVG): XML 1.0 allows no control characters but tab, line feed and carriage return, and
  not U+FFFE/U+FFFF (https://www.w3.org/TR/xml/#charsets); Qt's SVG writer copies text as it is,
  so one such character in a component name makes the whole file ill-formed. Each one is
  written as its Unicode *control picture* (U+2400 + code, e.g. ESC as "␛"), so the reader sees
  that something was there.
"""

from __future__ import annotations

import re

#: the first characters that make a spreadsheet cell a formula (OWASP, see the module text)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value):
    """``value`` as a spreadsheet shows it as text: a string that a spreadsheet would run as a
    formula gets a leading apostrophe; other values (numbers, plain text) are returned as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_row(values) -> list:
    """:func:`csv_cell` of each value of a row."""
    return [csv_cell(v) for v in values]


# C0 controls but TAB, LF, CR; DEL and the C1 block are allowed by XML 1.0 but shown the same way
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def _picture(match: re.Match) -> str:
    ch = match.group()
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"  # SYMBOL FOR DELETE
    return "\ufffd"


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 forbids replaced by its control picture."""
    return _XML_BAD.sub(_picture, text)


def xml_bytes(data: bytes) -> bytes:
    """A UTF-8 XML document with every forbidden character replaced (see :func:`xml_text`);
    bytes that are not UTF-8 become U+FFFD."""
    text = data.decode("utf-8", errors="replace")
    return xml_text(text).encode("utf-8")
