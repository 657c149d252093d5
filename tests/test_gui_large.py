"""Large designs readable (issue #14): rails coloured apart with a key, parallel cables bundled far
out with their count, an overview map to jump with, run plots tall enough to read."""

from collections import Counter

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication

from designer.gui.cables import RAIL_COLORS, CableLayer, rail_color
from designer.gui.plots import MIN_ROW_PX
from designer.gui.testing import open_window
from designer.topology.templates import rail_optimized


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


@pytest.fixture(scope="module")
def rail_design():
    return rail_optimized(servers=32, storage="none")


def test_each_rail_has_its_own_colour_and_a_key(qtbot, rail_design):
    w = open_window(qtbot, rail_design.copy())
    topo, scene = w.design.topology, w.scene
    nic_slots = {c.slot for c in topo.components.values() if c.kind in ("nic", "dpu") and c.parent
                 and topo.links_of(c.id)}
    assert len(nic_slots) >= 2 and scene.rails == sorted(nic_slots)
    for lid, cable in scene.link_items.items():
        link = topo.links[lid]
        nic = next((topo.components[e] for e in (link.a, link.b)
                    if topo.components[e].kind in ("nic", "dpu")), None)
        if nic is not None:
            assert cable.rail == nic.slot, lid
            assert CableLayer.pen(cable.style()).color() == rail_color(nic.slot)
    # a rail leaf's uplinks are of its rail: every server cable of that leaf is of one rail
    leaf = next(s for s in topo.switches() if s.props.get("tier", "leaf") == "leaf"
                and any(topo.components[n].kind == "nic" for n in topo.neighbors(s.id)))
    (rail,) = {scene.link_items[l.id].rail for l in topo.links_of(leaf.id)
               if topo.components[l.a if l.b == leaf.id else l.b].kind == "nic"}
    uplinks = [l for l in topo.links_of(leaf.id) if topo.components[l.a if l.b == leaf.id else l.b].kind == "switch"]
    assert uplinks and all(scene.link_items[l.id].rail == rail for l in uplinks)
    assert len({c.name() for c in RAIL_COLORS}) == len(RAIL_COLORS)  # distinct colours
    legend = w.view.rail_legend
    assert legend.isVisible() and legend.rails == scene.rails
    scene.show_utilization({lid: 0.5 for lid in topo.links}, set())  # utilization wins
    assert not legend.isVisible() and w.view.legend.isVisible()
    assert all(c.style() == 4 for c in scene.link_items.values())
    scene.show_utilization(None)
    assert legend.isVisible()


def _groups(topo):
    """Independently of the canvas: the box each component's cables are bundled at."""
    def top(cid):
        comp = topo.components[cid]
        if comp.kind in ("nic", "dpu") and comp.parent:
            return top(comp.parent)
        if comp.kind == "gpu_server" and comp.parent:
            return comp.parent
        return cid
    return top


def test_far_out_parallel_cables_are_drawn_as_bundles_with_their_count(qtbot, rail_design):
    w = open_window(qtbot, rail_design.copy())
    topo, scene, view = w.design.topology, w.scene, w.view
    top = _groups(topo)
    expected = Counter()
    for link in topo.links.values():
        a, b = top(link.a), top(link.b)
        if a != b:
            expected[tuple(sorted((a, b)))] += 1
    bundles = scene.bundles()
    assert Counter({tuple(sorted((b.a, b.b))): b.count for b in bundles}) == expected
    assert max(expected.values()) > 1 and len(bundles) < len(topo.links)
    for b in bundles:  # one rail: its colour; under the overlay the busiest cable's
        if len(b.rails) == 1 and isinstance(b.style, str):
            assert b.style == f"rail:{next(iter(b.rails))}"
    assert bundles[0].width() >= 1.0 and max(b.width() for b in bundles) > 1.0
    layer = scene.cables
    view.zoom_to_fit()
    view.zoom_reset()
    view.zoom(0.2)
    before = layer.bundles_drawn
    view.viewport().grab()
    assert layer.bundled and layer.bundles_drawn > before
    view.zoom_reset()  # close in: every cable on its own
    view.viewport().grab()
    assert not layer.bundled


def test_the_overview_map_shows_where_the_canvas_is_and_jumps_on_a_click(qtbot, rail_design):
    w = open_window(qtbot, rail_design.copy(), minimap=True)
    view, mini = w.view, w.view.minimap
    view.zoom_reset()  # 100 %: only part of the design is in view
    mini.rebuild()
    QApplication.processEvents()
    assert mini.isVisible()
    frame = mini.shown_rect()
    assert 0 < frame.width() < mini.width() and 0 < frame.height() < mini.height()
    corner = QPointF(mini.width() - 6, mini.height() - 6)
    qtbot.mouseClick(mini, Qt.LeftButton, pos=corner.toPoint())
    center = view.mapToScene(view.viewport().rect().center())
    target = mini.to_scene(corner)
    reach = view.mapToScene(view.viewport().rect()).boundingRect()
    # centred there, or as near as the scroll range lets the view go
    assert abs(center.x() - target.x()) < reach.width() and abs(center.y() - target.y()) < reach.height()
    assert reach.contains(target)
    view.zoom_to_fit()  # all of the design in view: the map has nothing to add
    assert not mini.isVisible()
    # an edit while it is hidden is drawn when it shows again (not on every edit)
    sw = w.design.topology.switches()[0]
    w.editor.move({sw.id: (sw.pos[0] - 4000, sw.pos[1])})
    assert mini._stale
    view.zoom_reset()
    assert mini.isVisible() and not mini._stale
    assert mini._world.left() <= w.scene.comp_items[sw.id].sceneBoundingRect().left()
    assert mini.isVisible()
    w.actions_by_name["minimap"].trigger()  # View → Overview map off
    assert not mini.isVisible() and not w.actions_by_name["minimap"].isChecked()


def test_run_plots_keep_a_readable_height_at_the_default_window_size(qtbot):
    w = open_window(qtbot)
    w.resize(1500, 950)  # MainWindow's own default size
    w.run()
    w.cancel_run(wait=True)
    QApplication.processEvents()
    plots = w.run_view.plots
    assert plots.view.minimumHeight() >= 2 * MIN_ROW_PX
    for key, plot in plots.plots.items():
        assert plot.vb.sceneBoundingRect().height() >= 100, key  # the curve area, not 50 px


def test_the_canvas_keys_stay_in_their_corner_when_the_view_scrolls(qtbot, rail_design):
    # the viewport scrolls its child widgets with the picture; the keys must come back
    w = open_window(qtbot, rail_design.copy())
    view = w.view
    view.zoom_reset()
    for dx, dy in ((300, 0), (-700, 250), (0, -400)):
        view.horizontalScrollBar().setValue(view.horizontalScrollBar().value() + dx)
        view.verticalScrollBar().setValue(view.verticalScrollBar().value() + dy)
        QApplication.processEvents()
        for key in (view.rail_legend, view.legend):
            assert key.x() == 8
            assert key.y() + key.height() + 8 == view.viewport().height()
    view.zoom_to_fit()
    QApplication.processEvents()
    assert view.rail_legend.geometry().left() == 8
