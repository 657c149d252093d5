"""Small HTML builders for the report (the subset QTextDocument renders) and number formats."""

from __future__ import annotations

import math
from html import escape
from typing import Any, Sequence

#: table look: thin grey rules, header shaded; QTextDocument takes these attributes reliably
_TABLE = ('<table width="100%" cellspacing="0" cellpadding="5" border="1" '
          'style="border-collapse: collapse; border-color: #b0b0b0; margin-top: 6px; '
          'margin-bottom: 10px;">')
_HEAD_BG = "#e8edf3"


#: most decimal places :func:`num` writes (a smaller figure is "≈ 0"); never scientific notation
MAX_PLACES = 9


def num(value: Any, digits: int = 3) -> str:
    """A figure for a table: ``digits`` significant digits in plain decimals (0.000302, never
    3.02e-04), thousands separated, "–" if missing."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, (int, float)):
        return str(value)
    if value == 0:
        return "0"
    if isinstance(value, int) or (abs(value) >= 10 ** digits and float(value).is_integer()):
        return f"{value:,.0f}"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    if abs(value) < 10.0 ** -MAX_PLACES / 2:  # a planner reads decimals, not "3.02e-04"
        return "≈ 0"
    places = min(digits - 1 - math.floor(math.log10(abs(value))), MAX_PLACES)
    return f"{value:.{max(places, 0)}f}"


def days(value: float) -> str:
    """Training time as the report prints it: at the one precision of days every view prints
    (``services.style.figure``: one decimal, thousands separated)."""
    from designer.services.style import figure

    if value is None or not math.isfinite(value):
        return "–"
    return f"{figure('days', value)} days"


def percent(fraction: float | None, places: int = 1) -> str:
    if fraction is None or not math.isfinite(fraction):
        return "–"
    return f"{100 * fraction:.{places}f} %"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], widths: Sequence[int],
          align: str = "", small: bool = False) -> str:
    """A full-width table; ``widths`` are percentages, ``align`` one letter per column (l/r/c).

    Cells that are already HTML are passed as ``Markup``; everything else is escaped.
    """
    align = align or "l" * len(headers)
    side = {"l": "left", "r": "right", "c": "center"}
    size = ' style="font-size: 8pt;"' if small else ""
    out = [_TABLE, "<thead><tr>"]
    for head, w, a in zip(headers, widths, align):
        out.append(f'<th width="{w}%" align="{side[a]}" bgcolor="{_HEAD_BG}"{size}>{_cell(head)}</th>')
    out.append("</tr></thead>")
    for row in rows:
        out.append("<tr>")
        for cell, a in zip(row, align):
            # a right-aligned column holds figures: one is never broken across lines (Qt would
            # cut "0.00000500" into "0.00000" and "500" in a narrow column); the column widens
            style = ("white-space: nowrap; " if a == "r" else "") + ("font-size: 8pt;" if small else "")
            css = f' style="{style.strip()}"' if style else ""
            out.append(f'<td align="{side[a]}" valign="top"{css}>{_cell(cell)}</td>')
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


#: a zero-width space: a place a line may break, invisible where it does not (Unicode UAX #14,
#: class ZW), which Qt's text layout honours
BREAK = "\u200b"


def breakable(name: str) -> str:
    """An identifier (``checkpoint_serialize_cycles_per_byte``) that may break after its
    underscores only, never inside a word ("…cycles_per_by" / "te")."""
    return name.replace("_", "_" + BREAK)


def keep_together(text: str) -> str:
    """``text`` with its spaces made non-breaking ("tp = 2" stays on one line)."""
    return text.replace(" ", "\u00a0")


class Markup(str):
    """A string that is HTML already (not escaped again)."""


def _cell(value: Any) -> str:
    if isinstance(value, Markup):
        return value
    return escape(value if isinstance(value, str) else num(value))


def heading(text: str, new_page: bool = True) -> str:
    style = ' style="page-break-before: always;"' if new_page else ""
    return f'<h1{style}>{escape(text)}</h1>'


def para(text: str, small: bool = False) -> str:
    style = ' style="font-size: 8.5pt; color: #444444;"' if small else ""
    return f"<p{style}>{escape(text)}</p>"


def image(name: str, width: float, height: float, dpi: float) -> str:
    """An image ``width`` x ``height`` device pixels of a ``dpi`` page (HTML sizes are CSS pixels,
    1/96 inch)."""
    w, h = width * 96 / dpi, height * 96 / dpi
    return f'<p align="center"><img src="img:{name}" width="{w:.2f}" height="{h:.2f}"></p>'


STYLE = """
<style>
h1 { font-size: 16pt; color: #1f3a5f; margin-bottom: 8px; }
h2 { font-size: 12pt; color: #1f3a5f; margin-top: 14px; margin-bottom: 4px; }
h3 { font-size: 10pt; color: #1f3a5f; margin-top: 12px; margin-bottom: 2px; }
p { margin-top: 3px; margin-bottom: 5px; }
th { font-weight: bold; }
</style>
"""
