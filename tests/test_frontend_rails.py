"""Adapters linked only to a front-end (north-south) network carry no training traffic:
placement.servers_of leaves them out of a server's rails whatever the storage layout; storage
that hangs off the front-end network is still read through them (issue 13 front-end network,
found by H3)."""

import pytest

from designer.engine.placement import servers_of
from designer.topology.catalog import load_catalog
from designer.topology.design import Design
from designer.topology.model import Component, Link, Topology


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def design(storage: str, front_prop: bool = True) -> Design:
    t = Topology()
    t.add_component(Component("sw-c", "switch", "qm9700"))
    t.add_component(Component("sw-f", "switch", "sn5400", props={"frontend": True} if front_prop else {}))
    for s in (1, 2):
        t.add_component(Component(f"srv-{s}", "gpu_server", "dgx-h100"))
        for k in range(2):
            t.add_component(Component(f"nic-{s}{k}", "nic", "connectx-7", parent=f"srv-{s}", slot=k))
            t.add_link(Link(f"l-{s}{k}", f"nic-{s}{k}", "sw-c"))
        t.add_component(Component(f"dpu-{s}", "dpu", "bluefield-3", parent=f"srv-{s}", slot=5))
        t.add_link(Link(f"f-{s}", f"dpu-{s}", "sw-f", medium="ethernet"))
    if storage != "none":
        t.add_component(Component("stor", "storage", "generic-nvmeof-afa"))
        t.add_link(Link("ls", "stor", "sw-c" if storage == "converged" else "sw-f", medium="ethernet",
                        speed_Gbps=200))
    return Design(t)


@pytest.mark.parametrize("storage", ["none", "converged"])
def test_front_end_adapters_are_not_rails(catalog, storage):
    for info in servers_of(design(storage), catalog):
        assert all(e.startswith("nic-") for e in info.rails) and len(info.rails) == 2
        assert not [e for e in info.storage_ports if e.startswith("dpu-")]


def test_storage_on_the_front_end_is_read_through_it_but_training_is_not(catalog):
    info = servers_of(design("front"), catalog)[0]
    assert info.storage_ports == ("dpu-1",) and info.storage_targets == ("stor",)
    assert info.rails == ("nic-10", "nic-11")


def test_without_the_front_end_mark_the_adapter_is_a_rail(catalog):
    info = servers_of(design("none", front_prop=False), catalog)[0]
    assert "dpu-1" in info.rails
