"""Report charts drawn with QPainter: stacked bars (iteration breakdown) and line plots (utilization).

The charts are drawn in a fixed logical canvas of :data:`CANVAS_W` units wide, scaled to the
target, so text keeps its size relative to the chart whatever resolution the picture is written
at (the PDF puts them in at print resolution; :func:`designer.report.export.save_picture` writes
them as PNG or SVG).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from PySide6.QtCore import QPointF, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPainterPath, QPen

from designer.report.export import fit
from designer.services.style import BREAKDOWN_COLORS

#: width of the logical drawing canvas; heights are chosen per chart
CANVAS_W = 900.0
FONT_FAMILY = "DejaVu Sans"

#: the live plots' colours, so the report and the window agree (Okabe-Ito palette)
PALETTE = BREAKDOWN_COLORS
_GRID = QColor("#D9D9D9")
_AXIS = QColor("#404040")


def colour(i: int) -> QColor:
    return QColor(PALETTE[i % len(PALETTE)])


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering [lo, hi] (steps of 1, 2 or 5 x 10^k).

    Heckbert, "Nice numbers for graph labels", Graphics Gems (1990): the step is the data span
    divided by the tick count, rounded to the nearest 1, 2, 5 or 10 times a power of ten.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * 0.999)
    first = math.floor(lo / step + 1e-9) * step
    ticks, value = [], first
    while value < hi + step * 0.999:
        ticks.append(round(value, 12))
        value += step
    return ticks


def _font(px: float, bold: bool = False) -> QFont:
    font = QFont(FONT_FAMILY)
    font.setPixelSize(max(1, round(px)))
    font.setBold(bold)
    return font


def _label(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e5 else f"{value:.3g}"


@dataclass(frozen=True)
class Chart:
    """Something to draw: ``height`` logical units tall (:data:`CANVAS_W` wide)."""

    height: float
    draw: Callable[[QPainter, QRectF], None]

    def paint(self, painter: QPainter, target: QRectF) -> None:
        """Draw scaled into ``target`` (aspect ratio kept, centred)."""
        box = fit(QSizeF(CANVAS_W, self.height), target)
        scale = box.width() / CANVAS_W
        painter.save()
        painter.translate(box.topLeft())
        painter.scale(scale, scale)
        self.draw(painter, QRectF(0, 0, CANVAS_W, self.height))
        painter.restore()

    def size(self, width_px: int) -> QSize:
        return QSize(width_px, round(width_px * self.height / CANVAS_W))

    def image(self, width_px: int) -> QImage:
        """The chart as a white-background image ``width_px`` wide."""
        img = QImage(self.size(width_px), QImage.Format_ARGB32)
        img.fill(Qt.white)
        painter = QPainter(img)
        painter.setRenderHint(QPainter.Antialiasing)
        painter.setRenderHint(QPainter.TextAntialiasing)
        self.paint(painter, QRectF(0, 0, img.width(), img.height()))
        painter.end()
        return img


_LEGEND_FONT_PX = 15


def _legend_layout(entries: Sequence[tuple[str, QColor | QPen]], left: float, top: float,
                   width: float) -> tuple[list[tuple[QPointF, str, QColor | QPen]], float]:
    """Where each legend entry goes, flowed left to right in rows, and the height used."""
    fm = QFontMetricsF(_font(_LEGEND_FONT_PX))
    x, y, row_h = left, top, fm.height() + 8
    placed = []
    for text, col in entries:
        w = 22 + fm.horizontalAdvance(text) + 22
        if x + w > left + width and x > left:
            x, y = left, y + row_h
        placed.append((QPointF(x, y), text, col))
        x += w
    return placed, (y + row_h - top) if entries else 0.0


def _legend(painter: QPainter, placed: list[tuple[QPointF, str, QColor | QPen]]) -> None:
    """Draw legend entries: a line sample for a pen (line plots), a square for a colour."""
    painter.setFont(_font(_LEGEND_FONT_PX))
    row_h = QFontMetricsF(painter.font()).height() + 8
    for at, text, mark in placed:
        mid = at.y() + row_h / 2
        if isinstance(mark, QPen):
            painter.setPen(mark)
            painter.drawLine(QPointF(at.x(), mid), QPointF(at.x() + 18, mid))
        else:
            painter.fillRect(QRectF(at.x(), mid - 7, 14, 14), mark)
        painter.setPen(_AXIS)
        painter.drawText(QRectF(at.x() + 22, at.y(), 1000, row_h), Qt.AlignLeft | Qt.AlignVCenter, text)


_TITLE_H = 34.0


def _title(painter: QPainter, rect: QRectF, text: str) -> float:
    painter.setFont(_font(19, bold=True))
    painter.setPen(_AXIS)
    painter.drawText(QRectF(rect.left(), rect.top(), rect.width(), _TITLE_H),
                     Qt.AlignLeft | Qt.AlignTop, text)
    return _TITLE_H


def stacked_bars(bars: Sequence[tuple[str, Sequence[tuple[str, float]]]], *, title: str,
                 unit: str = "s", total_text: Callable[[float], str] | None = None) -> Chart:
    """Horizontal stacked bars, one per entry of ``bars`` = ``(bar label, [(part, value), ...])``.

    Parts with the same name share a colour across bars; each bar shows its total at its end, as
    ``total_text`` writes it (the figure as the tables print it; default three significant digits
    and the unit).
    """
    total_text = total_text or (lambda total: f"{total:.3g} {unit}")
    parts: list[str] = []
    for _, segments in bars:
        parts += [name for name, _ in segments if name not in parts]
    colours = {name: colour(i) for i, name in enumerate(parts)}
    bar_h, gap = 46.0, 22.0
    tick_h = QFontMetricsF(_font(15)).height()
    legend_w = CANVAS_W - 140  # about the plot width (the labels column varies)
    _, legend_h = _legend_layout([(p, colours[p]) for p in parts], 0, 0, legend_w)
    height = _TITLE_H + len(bars) * (bar_h + gap) + 2 * tick_h + 12 + legend_h

    def draw(painter: QPainter, rect: QRectF) -> None:
        top = rect.top() + _title(painter, rect, title)
        painter.setFont(_font(15))
        fm = QFontMetricsF(painter.font())
        label_w = max([fm.horizontalAdvance(name) for name, _ in bars] + [40]) + 14
        totals = [sum(max(v, 0.0) for _, v in segs) for _, segs in bars]
        ticks = nice_ticks(0.0, max(totals + [1e-12]))
        x0, x1 = rect.left() + label_w, rect.right() - 90
        span = ticks[-1] or 1.0
        scale = (x1 - x0) / span
        plot_bottom = top + len(bars) * (bar_h + gap)
        for t in ticks:  # grid and tick labels
            x = x0 + t * scale
            painter.setPen(QPen(_GRID, 1))
            painter.drawLine(QPointF(x, top), QPointF(x, plot_bottom))
            painter.setPen(_AXIS)
            painter.drawText(QRectF(x - 50, plot_bottom + 2, 100, fm.height()), Qt.AlignHCenter,
                             _label(t))
        painter.drawText(QRectF(x0, plot_bottom + fm.height() + 2, x1 - x0, fm.height()),
                         Qt.AlignHCenter, unit)
        for i, ((name, segs), total) in enumerate(zip(bars, totals)):
            y = top + i * (bar_h + gap) + gap / 2
            painter.setPen(_AXIS)
            painter.drawText(QRectF(rect.left(), y, label_w - 10, bar_h),
                             Qt.AlignRight | Qt.AlignVCenter, name)
            x = x0
            for part, value in segs:
                w = max(value, 0.0) * scale
                painter.fillRect(QRectF(x, y, w, bar_h), colours[part])
                x += w
            painter.setPen(_AXIS)
            painter.drawText(QRectF(x + 6, y, 120, bar_h), Qt.AlignLeft | Qt.AlignVCenter,
                             total_text(total))
        painter.setPen(QPen(_AXIS, 1.5))
        painter.drawLine(QPointF(x0, top), QPointF(x0, plot_bottom))
        placed, _ = _legend_layout([(p, colours[p]) for p in parts], x0,
                                   plot_bottom + 2 * fm.height() + 12, legend_w)
        _legend(painter, placed)

    return Chart(height, draw)


@dataclass(frozen=True)
class Series:
    label: str
    x: Sequence[float]
    y: Sequence[float]
    colour: str = ""   #: "" = the palette colour of its position
    dashed: bool = False
    points: float = 0.0  #: > 0: markers of this diameter at the points, no line (a scatter)

    def pen(self, index: int) -> QPen:
        pen = QPen(QColor(self.colour) if self.colour else colour(index), 2.5)
        if self.dashed:
            pen.setStyle(Qt.DashLine)
        return pen


def line_plot(series: Sequence[Series], *, title: str, x_label: str, y_label: str,
              y_range: tuple[float, float] | None = None, height: float = 380.0) -> Chart:
    """Lines over a shared x axis (e.g. utilization over time), with grid, ticks and a legend."""

    def draw(painter: QPainter, rect: QRectF) -> None:
        top = rect.top() + _title(painter, rect, title)
        painter.setFont(_font(15))
        fm = QFontMetricsF(painter.font())
        xs = [v for s in series for v in s.x] or [0.0, 1.0]
        ys = [v for s in series for v in s.y] or [0.0, 1.0]
        lo, hi = y_range if y_range else (min(0.0, min(ys)), max(ys))
        if any(s.points for s in series):  # markers at the edges stay whole
            pad = 0.04 * ((max(xs) - min(xs)) or abs(max(xs)) or 1.0)
            xs = [min(xs) - pad, max(xs) + pad]
            hi = hi + 0.06 * ((hi - lo) or abs(hi) or 1.0) if not y_range else hi
        yt = nice_ticks(lo, hi)
        xt = [t for t in nice_ticks(min(xs), max(xs), 8) if min(xs) - 1e-9 <= t <= max(xs) + 1e-9]
        entries = [(s.label, s.pen(i)) for i, s in enumerate(series)]
        _, legend_h = _legend_layout(entries, 0, 0, rect.width())
        _legend(painter, _legend_layout(entries, rect.left(), rect.bottom() - legend_h,
                                        rect.width())[0])
        painter.setFont(_font(15))
        x0 = rect.left() + 24 + max(fm.horizontalAdvance(_label(t)) for t in yt) + 8
        x1 = rect.right() - 12
        y0 = rect.bottom() - legend_h - 2 * fm.height() - 12   # bottom of the plot area
        y1 = top + 6
        ylo, yhi, xlo, xhi = yt[0], yt[-1], min(xs), max(xs)

        def px(x: float) -> float:
            return x0 + (x - xlo) / ((xhi - xlo) or 1.0) * (x1 - x0)

        def py(y: float) -> float:
            return y0 - (y - ylo) / ((yhi - ylo) or 1.0) * (y0 - y1)

        for t in yt:
            painter.setPen(QPen(_GRID, 1))
            painter.drawLine(QPointF(x0, py(t)), QPointF(x1, py(t)))
            painter.setPen(_AXIS)
            painter.drawText(QRectF(rect.left() + 24, py(t) - fm.height() / 2, x0 - rect.left() - 32,
                                    fm.height()), Qt.AlignRight | Qt.AlignVCenter, _label(t))
        for t in xt:
            painter.setPen(QPen(_GRID, 1))
            painter.drawLine(QPointF(px(t), y0), QPointF(px(t), y1))
            painter.setPen(_AXIS)
            painter.drawText(QRectF(px(t) - 50, y0 + 2, 100, fm.height()), Qt.AlignHCenter,
                             _label(t))
        painter.drawText(QRectF(x0, y0 + fm.height() + 4, x1 - x0, fm.height()), Qt.AlignHCenter,
                         x_label)
        painter.save()  # y label, rotated
        painter.translate(rect.left() + 2, (y0 + y1) / 2)
        painter.rotate(-90)
        painter.drawText(QRectF(-200, 0, 400, fm.height()), Qt.AlignHCenter | Qt.AlignTop, y_label)
        painter.restore()
        painter.setPen(QPen(_AXIS, 1.5))
        painter.drawLine(QPointF(x0, y0), QPointF(x1, y0))
        painter.drawLine(QPointF(x0, y0), QPointF(x0, y1))
        painter.save()
        painter.setClipRect(QRectF(x0, y1 - 2, x1 - x0, y0 - y1 + 4))
        for i, s in enumerate(series):
            if s.points:
                painter.setPen(Qt.NoPen)
                painter.setBrush(s.pen(i).color())
                for x, y in zip(s.x, s.y):
                    painter.drawEllipse(QPointF(px(x), py(y)), s.points / 2, s.points / 2)
                continue
            path = QPainterPath()
            for j, (x, y) in enumerate(zip(s.x, s.y)):
                (path.lineTo if j else path.moveTo)(QPointF(px(x), py(y)))
            painter.setPen(s.pen(i))
            painter.drawPath(path)
        painter.restore()

    return Chart(height, draw)
