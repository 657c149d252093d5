"""The utilization overlay of the canvas: cables coloured by utilization (drawn directly and from
the far-out picture cache), bottlenecks outlined, a legend, tooltips; ``None`` restores."""

import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter

from designer.gui.items import BOTTLENECK, MEDIUM_COLOR, UTIL_COLORS
from designer.gui.scene import DesignScene
from designer.gui.testing import open_window
from designer.topology.catalog import load_catalog
from designer.topology.design import Design
from designer.topology.model import Component, Link, Topology


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def _design():
    """Two spines over two leaves; cable midpoints lie well away from every box."""
    topo = Topology()
    for i, (x, y, tier) in enumerate([(0, 0, "spine"), (600, 0, "spine"), (0, 800, "leaf"),
                                      (600, 800, "leaf")], 1):
        topo.add_component(Component(f"sw-{i}", "switch", "qm9700", props={"tier": tier}, pos=(x, y)))
    topo.add_link(Link("link-1", "sw-1", "sw-3", "infiniband", speed_Gbps=400.0))
    topo.add_link(Link("link-2", "sw-2", "sw-4", "infiniband", speed_Gbps=400.0))
    return Design(topo, "overlay")


def _near(color: QColor, want: QColor, tol: int = 40) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(color.getRgb()[:3], want.getRgb()[:3]))


def _pixel(scene: DesignScene, at: QPointF) -> QColor:
    """Colour of the scene at a point, rendered 1:1 (the cable layer draws directly)."""
    image = QImage(21, 21, QImage.Format_ARGB32)
    image.fill(Qt.white)
    painter = QPainter(image)
    scene.render(painter, QRectF(0, 0, 21, 21), QRectF(at.x() - 10, at.y() - 10, 21, 21))
    painter.end()
    return image.pixelColor(10, 10)


@pytest.fixture
def scene(qapp):
    s = DesignScene(load_catalog())
    s.set_design(_design())
    yield s
    s.detach()


def test_cable_colours_follow_utilization_and_clearing_restores(scene):
    mid1, mid2 = QPointF(0, 400), QPointF(600, 400)
    assert _near(_pixel(scene, mid1), MEDIUM_COLOR["infiniband"])
    scene.show_utilization({"link-1": 0.97, "link-2": 0.02})
    assert _near(_pixel(scene, mid1), UTIL_COLORS[-1])   # saturated: dark red
    assert _near(_pixel(scene, mid2), UTIL_COLORS[0])    # idle: green
    assert "utilization 97 %" in scene.link_items["link-1"].tooltip()
    scene.show_utilization({"link-1": 0.5})              # a missing cable counts as idle
    assert _near(_pixel(scene, mid1), UTIL_COLORS[4])
    assert _near(_pixel(scene, mid2), UTIL_COLORS[0])
    scene.show_utilization(None)
    assert _near(_pixel(scene, mid1), MEDIUM_COLOR["infiniband"])
    assert "utilization" not in scene.link_items["link-1"].tooltip()


def test_marked_components_and_cables_are_outlined_until_cleared(scene):
    scene.show_utilization({"link-1": 0.9}, marked={"sw-3", "link-1"})
    assert scene.comp_items["sw-3"].marked and not scene.comp_items["sw-4"].marked
    item = scene.comp_items["sw-3"]
    body = item.mapRectToScene(item.body())
    outline = QPointF(body.center().x(), body.bottom() + 3)     # 3 units outside the box edge
    assert _near(_pixel(scene, outline), BOTTLENECK)
    halo = QPointF(3, 400)  # beside the cable's own 4 px line, inside the 7 px outline
    assert _near(_pixel(scene, halo), BOTTLENECK)
    assert "bottleneck" in scene.link_items["link-1"].tooltip()
    scene.show_utilization(None)
    assert not scene.comp_items["sw-3"].marked
    assert not _near(_pixel(scene, outline), BOTTLENECK)
    assert not _near(_pixel(scene, halo), BOTTLENECK)


def test_far_out_picture_and_legend_follow_the_overlay(qtbot):
    w = open_window(qtbot, _design())
    view = w.view
    view.zoom(0.2)                      # far out: the cable layer paints from its cached picture
    view.centerOn(QPointF(0, 400))

    def shown() -> QColor:
        return view.viewport().grab().toImage().pixelColor(view.mapFromScene(QPointF(0, 400)))

    assert _near(shown(), MEDIUM_COLOR["infiniband"], 60)
    assert not view.legend.isVisible()
    w.scene.show_utilization({"link-1": 1.0, "link-2": 0.0})
    assert _near(shown(), UTIL_COLORS[-1], 60)
    assert view.legend.isVisible()
    w.scene.show_utilization(None)
    assert _near(shown(), MEDIUM_COLOR["infiniband"], 60)
    assert not view.legend.isVisible()
