"""Editing as a new user meets it (issue #14): which cables are accepted and which port/fabric they
use, a model change keeping the switch's tier, connect mode's button, redo keys, rubber bands."""

import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QKeySequence

from designer.gui.editor import RefusedEdit
from designer.gui.testing import center_of, click, drag, open_window
from designer.topology.design import Design
from designer.topology.model import Component, Topology
from designer.topology.validation import validate


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def small(*extra: Component) -> Design:
    """A rack with one server carrying two BlueField-3 DPUs, an InfiniBand and an Ethernet switch."""
    t = Topology()
    t.add_component(Component("rack-1", "rack", "rack-42u", pos=(0.0, 300.0)))
    t.add_component(Component("srv-1", "gpu_server", "dgx-h100", parent="rack-1", slot=1))
    t.add_component(Component("dpu-1", "dpu", "bluefield-3", parent="srv-1", slot=0))
    t.add_component(Component("dpu-2", "dpu", "bluefield-3", parent="srv-1", slot=1))
    t.add_component(Component("ib", "switch", "qm9700", props={"tier": "spine"}, pos=(0.0, 0.0)))
    t.add_component(Component("eth", "switch", "sn5600", pos=(600.0, 0.0)))
    for comp in extra:
        t.add_component(comp)
    return Design(name="small", topology=t)


def test_cables_the_design_check_accepts_are_accepted_and_the_user_picks_port_and_fabric(qtbot):
    w = open_window(qtbot, small(Component("nic-x", "nic", "connectx-7", pos=(900.0, 0.0)),
                                 Component("nic-y", "nic", "connectx-7", pos=(900.0, 300.0))))
    topo, ed = w.design.topology, w.editor
    # a VPI DPU (catalog medium Ethernet) to an InfiniBand switch: accepted, on InfiniBand; the
    # design check has nothing against it either
    link = ed.link_options("dpu-1", "ib")
    assert [(l.a, l.b, l.medium) for l in link] == [("dpu-1", "ib", "infiniband")]
    ed.connect("dpu-1", "ib")
    assert not [p for p in validate(w.design, w.catalog) if p.link and p.severity == "error"]
    # from the server: its two DPUs both fit (dpu-1 has a port left): the user is asked
    options = ed.link_options("srv-1", "eth")
    assert [(l.a, l.medium) for l in options] == [("dpu-1", "ethernet"), ("dpu-2", "ethernet")]
    asked = []
    w.view.choose_link = lambda opts, at=None: asked.append(opts) or opts[1]
    w.view.set_connect_mode(True)
    drag(w.view, center_of(w, "srv-1"), center_of(w, "eth"))
    (made,) = [l for l in topo.links.values() if "eth" in (l.a, l.b)]
    assert len(asked) == 1 and {made.a, made.b} == {"dpu-2", "eth"} and made.medium == "ethernet"
    # two VPI adapters cabled back to back: InfiniBand or Ethernet, the user's choice
    options = ed.link_options("nic-x", "nic-y")
    assert sorted(l.medium for l in options) == ["ethernet", "infiniband"]
    w.view.choose_link = lambda opts, at=None: next(o for o in opts if o.medium == "ethernet")
    drag(w.view, center_of(w, "nic-x"), center_of(w, "nic-y"))
    (back,) = [l for l in topo.links.values() if {l.a, l.b} == {"nic-x", "nic-y"}]
    assert back.medium == "ethernet"
    # cancelling the choice lays nothing
    n = len(topo.links)
    w.view.choose_link = lambda opts, at=None: None
    ed.delete([back.id])
    drag(w.view, center_of(w, "nic-x"), center_of(w, "nic-y"))
    assert len(topo.links) == n - 1 and "cancelled" in w._status.text()
    # two switches of different fabrics cannot share a cable: refused with the reason
    with pytest.raises(RefusedEdit, match="infiniband.*ethernet"):
        ed.link_options("ib", "eth")


def test_a_new_switch_model_keeps_the_tier_as_one_undo_step(qtbot):
    w = open_window(qtbot, small())
    comp = lambda: w.design.topology.components["ib"]  # noqa: E731
    assert w.catalog.resolve(comp())["tier"] == "spine"
    w.editor.set_fields(["ib"], "model", "sn5600")  # the catalog's SN5600 is a leaf switch
    assert comp().model == "sn5600" and w.catalog.resolve(comp())["tier"] == "spine"
    # a spine switch given a model whose catalog tier is spine needs no override
    spine_models = [e["id"] for e in w.catalog.entries("switch") if e.get("tier") == "spine"]
    if spine_models:
        w.editor.set_fields(["ib"], "model", spine_models[0])
        assert "tier" not in comp().props and w.catalog.resolve(comp())["tier"] == "spine"
        w.editor.stack.undo()
    w.editor.stack.undo()
    assert comp().model == "qm9700" and comp().props == {"tier": "spine"}


def test_leaving_connect_mode_with_esc_unlights_its_button(qtbot):
    w = open_window(qtbot)
    action = w.actions_by_name["connect"]
    action.trigger()
    assert action.isChecked() and w.view.connect_mode
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key_Escape)
    assert not w.view.connect_mode and not action.isChecked()
    action.trigger()  # and the button turns it on again in one press
    assert w.view.connect_mode and action.isChecked()


def test_redo_answers_ctrl_y_and_ctrl_shift_z(qtbot):
    w = open_window(qtbot)
    keys = {k.toString() for k in w.actions_by_name["redo"].shortcuts()}
    assert {"Ctrl+Y", "Ctrl+Shift+Z"} <= keys
    assert w.actions_by_name["undo"].shortcut() == QKeySequence("Ctrl+Z")
    topo = w.design.topology
    before = topo.components["sw-1"].pos
    w.editor.move({"sw-1": (before[0] + 200, before[1])})
    after = topo.components["sw-1"].pos
    w.view.setFocus()
    for key, mods in ((Qt.Key_Y, Qt.ControlModifier), (Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)):
        qtbot.keyClick(w.view, Qt.Key_Z, Qt.ControlModifier)
        assert topo.components["sw-1"].pos == before
        qtbot.keyClick(w.view, key, mods)
        assert topo.components["sw-1"].pos == after, QKeySequence(key | mods).toString()


def test_a_rubber_band_starting_on_a_cable_between_racks_selects_what_it_encloses(qtbot):
    w = open_window(qtbot)
    scene = w.scene
    # a point on a cable where there is no component (between the racks and the switches)
    for lid, cable in scene.link_items.items():
        start = cable.line.pointAt(0.5)
        if scene.component_at(start) is None and scene.link_at(start, 1.0) is not None:
            break
    else:
        pytest.fail("no cable runs over empty canvas in the example")
    scale = w.view.scale_factor()
    band_end = start + QPointF(600 / scale, 500 / scale)
    drag(w.view, start, band_end)
    chosen = scene.selected_ids()
    comps = [i for i in chosen if i in w.design.topology.components]
    assert comps, "the band selected no component"
    band = QRectF(start, band_end).normalized()
    assert all(band.intersects(scene.comp_items[c].sceneBoundingRect()) for c in comps)
    # a click (no drag) on the same cable still picks the cable alone
    click(w.view, scene.link_items[lid].line.pointAt(0.5))
    assert scene.selected_ids() == [scene.link_at(start, 1.0)]
