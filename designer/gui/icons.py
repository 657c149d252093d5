"""Small icons drawn in the canvas colours, so the palette and the canvas look alike."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap

from designer.gui.items import KIND_COLOR, TIER_COLOR
from designer.paths import resources_dir


@lru_cache(maxsize=None)
def kind_icon(kind: str, tier: str | None = None) -> QIcon:
    """A 16 px glyph for a component kind (a switch in its tier's colour)."""
    if kind == "switch":
        color = TIER_COLOR.get(tier or "leaf", TIER_COLOR["leaf"])
    else:
        color = KIND_COLOR.get(kind, QColor("#666"))
    pix = QPixmap(32, 32)
    pix.fill(Qt.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.Antialiasing)
    p.setPen(QPen(color.darker(130), 2))
    p.setBrush(color.lighter(160))
    if kind == "rack":
        p.drawRect(QRectF(7, 2, 18, 28))
        for y in (8, 14, 20):
            p.drawLine(10, y, 22, y)
    elif kind == "gpu_server":
        p.drawRoundedRect(QRectF(2, 8, 28, 16), 3, 3)
        p.setBrush(color)
        for x in (6, 12, 18):
            p.drawRect(QRectF(x, 12, 4, 8))
    elif kind in ("dpu", "nic"):
        p.setBrush(color)
        p.drawRect(QRectF(4, 9, 24, 14))
        p.setPen(QPen(Qt.white, 2))
        p.drawLine(9, 16, 23, 16)
    elif kind == "switch":
        p.drawRoundedRect(QRectF(2, 10, 28, 12), 3, 3)
        p.setBrush(color)
        for x in (6, 11, 16, 21):
            p.drawRect(QRectF(x, 14, 3, 4))
    else:  # storage: a cylinder
        p.drawRect(QRectF(6, 8, 20, 18))
        p.drawEllipse(QRectF(6, 4, 20, 8))
        p.drawEllipse(QRectF(6, 22, 20, 8))
    p.end()
    return QIcon(pix)


def app_icon() -> QIcon:
    return QIcon(str(resources_dir() / "icons" / "dpu-designer.svg"))
