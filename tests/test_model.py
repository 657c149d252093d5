"""Domain model: edits, change events, undo-able returns, id allocation, graph cache, queries."""

import pytest

from designer.topology.design import Design
from designer.topology.model import Component, Link, Topology, TopologyError


def small() -> Topology:
    t = Topology()
    t.add_component(Component("rack-1", "rack", "rack-42u"))
    t.add_component(Component("srv-1", "gpu_server", "dgx-h100", parent="rack-1", slot=1))
    t.add_component(Component("srv-2", "gpu_server", "dgx-h100", parent="rack-1", slot=9))
    t.add_component(Component("nic-1", "nic", "connectx-7", parent="srv-1", slot=0))
    t.add_component(Component("nic-2", "nic", "connectx-7", parent="srv-2", slot=0))
    t.add_component(Component("sw-1", "switch", "qm9700", props={"tier": "leaf"}))
    t.add_component(Component("sw-2", "switch", "qm9700", props={"tier": "spine"}))
    t.add_link(Link("link-1", "nic-1", "sw-1"))
    t.add_link(Link("link-2", "nic-2", "sw-1"))
    t.add_link(Link("link-3", "sw-1", "sw-2", lanes=2))
    return t


def test_events_for_every_edit():
    t = small()
    seen = []
    t.subscribe(seen.append)
    t.update_component("srv-1", name="first")
    t.set_prop("srv-1", "gpu_count", 4)
    t.set_prop("srv-1", "gpu_count", None)
    t.update_link("link-1", speed_Gbps=200.0)
    t.remove_link("link-2")
    assert [e.type for e in seen] == ["component_changed"] * 3 + ["link_changed", "link_removed"]
    assert seen[0].old.name == "" and seen[0].new.name == "first"
    assert seen[1].new.props == {"gpu_count": 4} and seen[2].new.props == {}
    assert seen[3].old.speed_Gbps == 400.0 and seen[3].new.speed_Gbps == 200.0
    t.unsubscribe(seen.append)
    t.update_component("srv-1", name="again")
    assert len(seen) == 5


def test_remove_component_returns_what_undo_needs():
    t = small()
    before = t.copy()
    comp, links, detached = t.remove_component("srv-1")
    assert comp.id == "srv-1" and links == [] and [c.id for c in detached] == ["nic-1"]
    assert t.get("nic-1").parent is None and "srv-1" not in t.components
    # undo by hand: put back the component, re-attach the children
    t.add_component(comp)
    for child in detached:
        t.update_component(child.id, parent=child.parent, slot=child.slot)
    assert t == before
    comp, links, _ = t.remove_component("sw-1")
    assert sorted(l.id for l in links) == ["link-1", "link-2", "link-3"]
    assert t.links_of("nic-1") == [] and "link-3" not in t.links


def test_ids_never_reused():
    t = small()
    first = t.new_component_id("gpu_server")
    assert first == "srv-3"
    t.add_component(Component(first, "gpu_server", "dgx-h100"))
    t.remove_component(first)
    assert t.new_component_id("gpu_server") == "srv-4"
    with pytest.raises(TopologyError, match="already used"):
        t.add_component(Component("sw-1", "switch", "qm9700"))


def test_bad_edits_refused():
    t = small()
    with pytest.raises(TopologyError, match="names no component"):
        t.add_link(Link("link-9", "nic-1", "nowhere"))
    with pytest.raises(TopologyError, match="to itself"):
        t.add_link(Link("link-9", "sw-1", "sw-1"))
    with pytest.raises(TopologyError, match="unknown medium"):
        t.add_link(Link("link-9", "sw-1", "sw-2", medium="carrier-pigeon"))
    with pytest.raises(TopologyError, match="unknown component kind"):
        t.add_component(Component("x-1", "toaster", "m"))
    with pytest.raises(TopologyError, match="cannot change"):
        t.update_component("srv-1", kind="switch")


def test_graph_is_cached_and_invalidated():
    t = small()
    g = t.graph()
    assert t.graph() is g
    assert g.has_edge("nic-1", "srv-1")  # attachment edge
    assert g.get_edge_data("nic-1", "srv-1")["attach:nic-1"]["attach"] is True
    assert t.shortest_path("srv-1", "srv-2") == ["srv-1", "nic-1", "sw-1", "nic-2", "srv-2"]
    t.remove_link("link-2")
    assert t.graph() is not g
    assert t.shortest_path("srv-1", "srv-2") is None


def test_queries():
    t = small()
    assert [c.id for c in t.servers()] == ["srv-1", "srv-2"]
    assert [c.id for c in t.switches("spine")] == ["sw-2"]
    assert [c.id for c in t.members("rack-1")] == ["srv-1", "srv-2"]
    assert [c.id for c in t.attached("srv-1")] == ["nic-1"]
    assert t.neighbors("sw-1") == ["nic-1", "nic-2", "sw-2"]
    assert t.links["link-3"].capacity_Gbps == 800.0
    assert t.gpus(lambda s: {"gpu_count": 2}) == [("srv-1", 0), ("srv-1", 1), ("srv-2", 0), ("srv-2", 1)]


def test_design_events_and_equality():
    d = Design(small(), "a")
    seen = []
    d.subscribe(seen.append)
    old = d.set("workload", {"id": "llama3-8b"})
    assert old == {} and seen[-1].type == "design_changed" and seen[-1].id == "workload"
    d.topology.update_component("srv-2", name="b")
    assert seen[-1].type == "component_changed"
    copy = d.copy()
    assert copy == d
    copy.set("name", "other")
    assert copy != d
    with pytest.raises(KeyError):
        d.set("colour", "red")


def test_from_items_builds_the_same_topology_as_one_edit_at_a_time():
    from designer.topology.model import Component, Link, Topology, TopologyError

    comps = [Component("rack-1", "rack", "rack-42u"),
             Component("srv-3", "gpu_server", "dgx-h100", parent="rack-1", slot=1),
             Component("dpu-1", "dpu", "bluefield-3", parent="srv-3", slot=0),
             Component("sw-1", "switch", "qm9700")]
    links = [Link("link-7", "dpu-1", "sw-1")]
    slow = Topology()
    for c in comps:
        slow.add_component(c)
    for l in links:
        slow.add_link(l)
    fast = Topology.from_items([c.copy() for c in comps], [l.copy() for l in links])
    assert fast == slow
    assert fast.members("rack-1")[0].id == "srv-3" and fast.attached("srv-3")[0].id == "dpu-1"
    assert fast.links_of("sw-1")[0].id == "link-7"
    assert fast.new_id("srv") == "srv-4" and fast.new_id("link") == "link-8"
    assert fast.shortest_path("srv-3", "sw-1") == ["srv-3", "dpu-1", "sw-1"]
    try:
        Topology.from_items(comps + [comps[0]], [])
    except TopologyError as exc:
        assert "duplicate" in str(exc)
    else:
        raise AssertionError("duplicate ids accepted")
