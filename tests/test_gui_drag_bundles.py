"""Issue #24: a drag far out changes only the bundles it touches. On a 256-server rail design at
"zoom to fit" (bundles drawn), a server and then a switch are dragged as the view does it (the
item moved, the cables of its subtree placed anew) and released (the edit): the layer works out
the lines of the bundles at the moved group only, and every bundle then lies where a fresh
bundling of the scene puts it."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from designer.gui.testing import open_window
from designer.topology.templates import rail_optimized


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def _lines(bundles):
    return {(b.a, b.b): (b.line.x1(), b.line.y1(), b.line.x2(), b.line.y2()) for b in bundles}


def _box_of(topo, cid):
    """Independently of the canvas: the box a component's bundles end at (its rack when it is a
    racked server or a NIC/DPU on one, else itself)."""
    comp = topo.components[cid]
    if comp.kind in ("nic", "dpu") and comp.parent:
        return _box_of(topo, comp.parent)
    return comp.parent if comp.kind == "gpu_server" and comp.parent else cid


def _drag(w, cid, steps=5):
    scene, view = w.scene, w.view
    layer = scene.cables
    item = scene.comp_items[cid]
    subtree = scene.subtree(cid)
    start = item.scenePos()
    rebuilt = []
    for step in range(1, steps + 1):
        before = layer.bundles_rebuilt
        item.setPos(start + QPointF(30.0 * step, 20.0 * step))
        scene.refresh_links(subtree)
        view.viewport().grab()
        assert layer.bundled
        rebuilt.append(layer.bundles_rebuilt - before)
    before = layer.bundles_rebuilt
    comp = w.design.topology.components[cid]
    if comp.parent:  # released in its rack: a new slot (the view's drop inside the rack)
        slot = w.editor.free_slot(comp.parent, comp, wanted=42)
        assert slot is not None and slot != comp.slot
        w.editor.set_slot(cid, comp.parent, slot)
    else:
        w.editor.move({cid: (item.scenePos().x(), item.scenePos().y())})
    view.viewport().grab()
    rebuilt.append(layer.bundles_rebuilt - before)
    # the layer's rows (read for the moved cables only) are every cable's line as it is now
    assert np.array_equal(layer._xy, np.array([c.ends for c in layer.cables.values()], dtype=float))
    return rebuilt


def test_dragging_a_server_at_fit_rebuilds_only_the_bundles_it_touches(qtbot):
    w = open_window(qtbot, rail_optimized(servers=256, storage="none"))
    topo, scene, view = w.design.topology, w.scene, w.view
    view.zoom_to_fit()
    view.viewport().grab()
    layer = scene.cables
    assert layer.bundled
    total = len(scene.bundles())
    racked = next(c for c in topo.servers() if c.parent)
    # a server dragged inside its rack: its bundles end at the rack, which stays: none changes
    assert _drag(w, racked.id) == [0] * 6
    assert _lines(layer.bundles()) == _lines(scene.bundles())
    # taken out of its rack (its group changes): bundled anew, once
    server = next(c for c in topo.servers() if c.parent and c.id != racked.id)
    before = layer.bundles_rebuilt
    w.editor.move({server.id: (0.0, -400.0)})
    view.viewport().grab()
    total = len(scene.bundles())
    assert layer.bundles_rebuilt - before == total
    assert _lines(layer.bundles()) == _lines(scene.bundles())
    switch = next(c for c in topo.switches() if c.pos is not None)
    for comp in (server, switch):  # free-standing: the bundles at its own box
        touching = [b for b in scene.bundles() if comp.id in (b.a, b.b)]
        assert 0 < len(touching) < total / 4
        rebuilt = _drag(w, comp.id)
        # every move and the release: the touching bundles' lines, not one more
        assert rebuilt == [len(touching)] * len(rebuilt), comp.id
        # and they are where a fresh bundling puts them (the others did not move)
        assert _lines(layer.bundles()) == _lines(scene.bundles())


def _styles(bundles):
    return {(b.a, b.b): b.style for b in bundles}


def test_the_overlay_restyles_the_bundles_without_bundling_anew(qtbot):
    w = open_window(qtbot, rail_optimized(servers=64, storage="none"))
    topo, scene, view = w.design.topology, w.scene, w.view
    view.zoom_to_fit()
    view.viewport().grab()
    layer = scene.cables
    assert layer.bundled
    before = layer.bundles_rebuilt
    plain = _styles(layer.bundles())
    util = {lid: (n % 10) / 10 + 0.05 for n, lid in enumerate(topo.links)}
    scene.show_utilization(util, set())
    view.viewport().grab()
    # as a fresh bundling styles them: the busiest cable's bin, none bundled anew
    assert _styles(layer.bundles()) == _styles(scene.bundles())
    assert any(isinstance(st, int) and st > 0 for st in _styles(layer.bundles()).values())
    scene.show_utilization(None)
    view.viewport().grab()
    assert _styles(layer.bundles()) == _styles(scene.bundles()) == plain
    assert layer.bundles_rebuilt == before


def test_a_zoom_in_before_the_bundle_picture_is_done_ends_refining(qtbot, monkeypatch):
    """Zoomed in from "zoom to fit" while the bundle picture was still being drawn a few batches
    a frame, the layer said it was refining for ever (the bundles' flag outlived them): a caller
    that waits for a sharp view (the bench, a screenshot) waited for nothing, and each refine
    repainted the whole layer. At a zoom drawn from tiles it ends once the tiles are drawn."""
    from designer.gui.cables import CableLayer

    w = open_window(qtbot, rail_optimized(servers=64, storage="none"))
    view, layer = w.view, w.scene.cables
    monkeypatch.setattr(CableLayer, "BUDGET_MS", 0.0)  # the least progress: a batch a frame,
    monkeypatch.setattr(CableLayer, "BUNDLE_BATCH", 16)  # of a few bundles
    view.zoom_to_fit()
    layer.changed()  # the bundles worked out anew: their picture drawn again, a batch a frame
    view.viewport().repaint()
    assert layer.bundled and layer.refining  # the bundle picture not done yet
    view.zoom_reset()  # 100 %: tiles
    frames = 0
    while True:
        view.viewport().repaint()
        frames += 1
        if not layer.refining:
            break
        assert frames < 100
    assert not layer.bundled and layer._tiles
