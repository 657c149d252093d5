"""Topology.add_new_link: the builders' one-step link adder behaves as new_id + add_link."""

import pytest

from designer.topology.model import Component, Link, Topology, TopologyError


def _topo():
    t = Topology()
    for cid, kind in (("sw-1", "switch"), ("nic-1", "nic"), ("nic-2", "nic")):
        t.add_component(Component(cid, kind, "m"))
    return t


def test_same_as_new_id_and_add_link():
    a, b = _topo(), _topo()
    la = a.add_new_link("nic-1", "sw-1", "infiniband", 400.0, lanes=2)
    lb = b.add_link(Link(b.new_id("link"), "nic-1", "sw-1", "infiniband", 400.0, lanes=2))
    assert la == lb and a.links == b.links and a.counters == b.counters
    assert a.links_of("nic-1") == b.links_of("nic-1")
    assert a.add_new_link("nic-2", "sw-1", "ethernet", 200.0).id == "link-2"


def test_event_sent_with_the_link_which_nobody_can_change():
    """A Link is immutable, so the event may carry the model's own: a subscriber that tries to
    change it is refused, and the model's link stays as it was."""
    t = _topo()
    seen = []
    t.subscribe(seen.append)
    link = t.add_new_link("nic-1", "sw-1", "infiniband", 400.0)
    assert [e.type for e in seen] == ["link_added"] and seen[0].new == link
    with pytest.raises(AttributeError):
        seen[0].new.speed_Gbps = 1.0
    assert t.links[link.id].speed_Gbps == 400.0


@pytest.mark.parametrize("a, b, medium, what", [("nic-1", "nope", "infiniband", "names no component 'nope'"),
                                                ("nic-1", "nic-1", "infiniband", "to itself"),
                                                ("nic-1", "sw-1", "carrier-pigeon", "unknown medium")])
def test_refusals(a, b, medium, what):
    t = _topo()
    with pytest.raises(TopologyError, match=what):
        t.add_new_link(a, b, medium, 400.0)
    assert not t.links
