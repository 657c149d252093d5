"""Issue 25, the management plane in the app: the template dialog offers the management network (on
by default for a new design), the canvas draws its cables muted (close in, as bundles far out and
under the utilization overlay), and the status bar counts its switches apart."""

import pytest
from PySide6.QtWidgets import QDialog

from designer.gui.cables import MANAGEMENT, CableLayer
from designer.gui.items import MANAGEMENT_COLOR
from designer.gui.template_dialog import TemplateDialog
from designer.gui.testing import open_window
from designer.topology.catalog import load_catalog
from designer.topology.management import management_ids
from designer.topology.templates import leaf_spine


#: settings in a folder of its own; a window closed with changes discards them (conftest)
pytestmark = pytest.mark.usefixtures("gui_settings")


def test_the_dialog_offers_the_management_network_on_by_default(qtbot):
    dialog = TemplateDialog(load_catalog())
    qtbot.addWidget(dialog)
    box = dialog.fields["leaf-spine"]["management"]
    assert box.currentData() == "oob"
    assert [box.itemData(i) for i in range(box.count())] == ["none", "oob", "oob+inband"]
    assert dialog.fields["leaf-spine"]["management_switch"].currentData() == "sn2201"
    name, values = dialog.choice()
    assert values["management"] == "oob"


def test_a_design_from_the_dialog_has_its_management_network_drawn_muted(qtbot, monkeypatch):
    def run(dialog):
        dialog.kind.setCurrentIndex(dialog.kind.findData("leaf-spine"))
        dialog.fields["leaf-spine"]["servers"].setValue(8)
        return QDialog.Accepted

    monkeypatch.setattr(TemplateDialog, "exec", run)
    w = open_window(qtbot)
    w.new_from_template()
    topo = w.design.topology
    ids = management_ids(topo)
    assert ids
    mgmt = {l.id for l in topo.links.values() if l.a in ids or l.b in ids}
    cables = w.scene.link_items
    assert {lid for lid, c in cables.items() if c.mgmt} == mgmt
    assert {cables[lid].style() for lid in mgmt} == {MANAGEMENT}
    assert all(c.style() != MANAGEMENT for lid, c in cables.items() if lid not in mgmt)
    assert CableLayer.pen(MANAGEMENT).color() == MANAGEMENT_COLOR
    assert "management network" in cables[next(iter(mgmt))].tooltip()
    # under the overlay they stay muted (they carry no training traffic)
    w.scene.show_utilization({lid: 0.5 for lid in cables}, marked=set())
    assert {cables[lid].style() for lid in mgmt} == {MANAGEMENT}
    assert all(c.style() != MANAGEMENT for lid, c in cables.items() if lid not in mgmt)
    w.scene.show_utilization(None)
    # far out, the bundles at a management switch are muted too, and no others
    bundles = w.scene.bundles() or []
    at_mgmt = [b for b in bundles if b.a in ids or b.b in ids]
    assert at_mgmt and {b.style for b in at_mgmt} == {MANAGEMENT}
    assert all(b.style != MANAGEMENT for b in bundles if b.a not in ids and b.b not in ids)
    assert "switches + " in w._counts.text() and f"{len(ids)} management switches" in w._counts.text()


def test_unticking_a_switchs_management_flag_draws_its_cables_in_the_fabrics_colours(qtbot):
    design = leaf_spine(servers=4, management="oob")
    w = open_window(qtbot, design)
    topo = w.design.topology
    ids = management_ids(topo)
    sw = next(i for i in sorted(ids) if topo.components[i].model == "sn2201")
    links = [l.id for l in topo.links_of(sw) if (l.b if l.a == sw else l.a) not in ids]  # its BMC/OOB cables
    ups = [l.id for l in topo.links_of(sw) if l.id not in links]  # to the aggregation: still management
    assert links and ups and all(w.scene.link_items[l].mgmt for l in links + ups)
    props = dict(topo.components[sw].props)
    props.pop("management")
    topo.update_component(sw, props=props)
    assert not any(w.scene.link_items[l].mgmt for l in links)
    assert all(w.scene.link_items[l].mgmt for l in ups)


def _access_and_server(design):
    topo = design.topology
    ids = management_ids(topo)
    sw = next(i for i in sorted(ids) if topo.components[i].model == "sn2201")
    srv = next(l.a for l in topo.links.values() if l.b == sw and topo.components[l.a].kind == "gpu_server")
    return topo, ids, sw, srv


def test_connect_mode_cables_a_bmc_or_oob_port_to_a_management_switch(qapp):
    from designer.gui.editor import Editor, RefusedEdit

    design = leaf_spine(servers=4, management="oob")
    editor = Editor(design, load_catalog())
    topo, ids, sw, srv = _access_and_server(design)
    dpus = [c.id for c in topo.attached(srv) if c.kind == "dpu"]
    for link in [l for l in topo.links.values() if l.b == sw and l.a in [srv, *dpus]]:
        topo.remove_link(link.id)
    # the server's BMC port first, then its DPUs' OOB ports (whose network ports are all in use)
    options = editor.link_options(srv, sw)
    assert [o.a for o in options] == [srv, *dpus]
    assert {o.speed_Gbps for o in options} == {1.0} and {o.medium for o in options} == {"ethernet"}
    editor.connect(srv, sw)
    assert [o.a for o in editor.link_options(srv, sw)] == dpus  # the BMC port is taken now
    for _ in dpus:
        editor.connect(srv, sw, editor.link_options(srv, sw)[0])
    with pytest.raises(RefusedEdit, match="no free OOB management port"):
        editor.link_options(dpus[0], sw)
    from designer.topology.validation import validate
    assert validate(design) == []


def test_an_uplink_between_management_switches_runs_at_the_uplink_speed(qapp):
    from designer.gui.editor import Editor

    design = leaf_spine(servers=4, management="oob")
    editor = Editor(design, load_catalog())
    topo, ids, sw, _ = _access_and_server(design)
    agg = next(i for i in ids if topo.components[i].model == "sn2700")
    for link in [l for l in topo.links.values() if {l.a, l.b} == {sw, agg}]:
        topo.remove_link(link.id)
    assert editor.link_options(sw, agg)[0].speed_Gbps == 100.0


def test_the_canvas_key_names_the_management_cables_when_the_design_has_them(qtbot):
    """The muted grey of the management cables has its entry under the rails' colours (a
    reviewer saw a tan band across the switch tiers that the key did not explain)."""
    from designer.topology.templates import rail_optimized

    with_mgmt = open_window(qtbot, rail_optimized(servers=8, management="oob"))
    key = with_mgmt.view.rail_legend
    with_mgmt.view._show_legend()
    assert key.rails and key.management
    without = open_window(qtbot, rail_optimized(servers=8, management="none"))
    without.view._show_legend()
    assert without.view.rail_legend.rails and not without.view.rail_legend.management
    assert key.height() > without.view.rail_legend.height()  # a row more for the entry
