"""The topology picture of a report: the canvas scene built for a design without any window.

The report draws exactly what the canvas shows, through the GUI's :class:`DesignScene`, so there is
one renderer of the topology. The scene follows a *copy* of the design (it subscribes to the
design it shows; the user's design must not keep a report's scene alive).
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter

from designer.gui.scene import DesignScene
from designer.report.export import fit, scene_source_rect
from designer.topology.design import Design


def topology_scene(design: Design, catalog) -> DesignScene:
    scene = DesignScene(catalog)
    scene.set_design(design.copy())
    scene.set_detail(1.0)  # show NIC/DPU badges, as the canvas does at 100 %
    return scene


def paint_scene(scene: DesignScene, painter: QPainter, target: QRectF) -> None:
    """Draw the whole scene centred in ``target``, keeping its aspect ratio."""
    source = scene_source_rect(scene)
    scene.render(painter, fit(source.size(), target), source, Qt.KeepAspectRatio)


def topology_image(scene: DesignScene, width_px: int, max_height_px: int) -> QImage:
    """The scene as an image ``width_px`` wide and as tall as its aspect ratio asks (capped)."""
    source = scene_source_rect(scene)
    height = min(max_height_px, max(16, round(width_px * source.height() / source.width())))
    image = QImage(QSize(width_px, height), QImage.Format_ARGB32)
    image.fill(Qt.white)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.Antialiasing)
    painter.setRenderHint(QPainter.TextAntialiasing)
    paint_scene(scene, painter, QRectF(0, 0, width_px, height))
    painter.end()
    return image
