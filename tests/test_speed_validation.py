"""Design rules at scale (issue 14/15): the parent-loop and reachability checks are linear and say
the same as a straightforward definition, on random designs of every shape."""

import random

import networkx as nx
import pytest

from designer.topology.model import Component, Link, Topology
from designer.topology.validation import _parts, _placement_loops, validate

KINDS = ("rack", "gpu_server", "nic", "dpu", "switch", "storage")


def random_parents(n: int, seed: int) -> Topology:
    """``n`` components, each parented to a random one (itself included), to nothing, or to a
    missing id: every shape of parent graph (chains, loops, self-loops, trees into loops)."""
    rng = random.Random(seed)
    ids = [f"c{i}" for i in range(n)]
    rng.shuffle(ids)  # design order is not id order
    comps = []
    for cid in ids:
        roll = rng.random()
        parent = None if roll < 0.15 else "missing" if roll < 0.2 else rng.choice(ids)
        comps.append(Component(cid, rng.choice(KINDS), "x", parent=parent))
    return Topology.from_items(comps, [])  # as a file holds them (the model's edits refuse loops)


def loops_by_definition(t: Topology) -> list[list[str]]:
    """Every loop of parents, as its members starting from the one first in design order, listed
    in that order: a component is on a loop when following parents from it comes back to it."""
    order = list(t.components)
    on_loop = []
    for cid in order:
        node, seen = t.components[cid].parent, 0
        while node in t.components and node != cid and seen <= len(order):
            node, seen = t.components[node].parent, seen + 1
        if node == cid:
            on_loop.append(cid)
    loops, done = [], set()
    for cid in on_loop:  # design order: the first member of each loop comes first
        if cid in done:
            continue
        cycle, node = [cid], t.components[cid].parent
        while node != cid:
            cycle.append(node)
            node = t.components[node].parent
        done.update(cycle)
        loops.append(cycle)
    return loops


@pytest.mark.parametrize("seed", range(25))
def test_each_loop_reported_once_from_its_first_member(seed):
    t = random_parents(40, seed)
    got = [(p.component, p.message) for p in _placement_loops(t)]
    want = [(c[0], "placement loops: " + " -> ".join(c + [c[0]])) for c in loops_by_definition(t)]
    assert got == want


def test_a_long_chain_into_a_loop():
    # 20,000 components in one chain whose top two point at each other: a walk per component
    # (the old rule) would take 200 million steps; the rule names the one loop
    n = 20_000
    t = Topology.from_items([Component(f"c{i}", "nic", "x", parent=f"c{i + 1}" if i < n - 1 else f"c{n - 2}")
                             for i in range(n)], [])  # as a file holds them
    problems = _placement_loops(t)
    assert [(p.code, p.component, p.message) for p in problems] == [
        ("bad-parent", f"c{n - 2}", f"placement loops: c{n - 2} -> c{n - 1} -> c{n - 2}")]


def test_a_self_parent_is_a_loop():
    t = Topology.from_items([Component("rack-1", "rack", "rack-42u", parent="rack-1")], [])
    assert [p.message for p in _placement_loops(t)] == ["placement loops: rack-1 -> rack-1"]


def random_fabric(n: int, links: int, seed: int) -> Topology:
    rng = random.Random(seed)
    t = Topology()
    for i in range(n):
        kind = rng.choice(("gpu_server", "nic", "switch", "storage"))
        servers = [c.id for c in t.components.values() if c.kind == "gpu_server"]
        parent = rng.choice(servers) if kind == "nic" and servers and rng.random() < 0.8 else None
        t.add_component(Component(f"c{i}", kind, "x", parent=parent))
    ids = list(t.components)
    for k in range(links):
        a, b = rng.choice(ids), rng.choice(ids)
        if a != b:
            t.add_link(Link(f"l{k}", a, b))
    return t


@pytest.mark.parametrize("seed", range(15))
def test_parts_are_the_graphs_connected_components(seed):
    t = random_fabric(60, seed % 5 * 12, seed)
    part = _parts(t)
    want = list(nx.connected_components(t.graph()))
    # same partition, numbered in the order networkx finds them (first member in design order)
    assert [sorted(c for c in t.components if part[c] == i) for i in range(len(want))] == \
        [sorted(c for c in comp) for comp in want]


def test_isolation_rules_follow_the_parts():
    # two islands of servers, storage only on the smaller one
    t = Topology()
    for i in range(5):
        t.add_component(Component(f"srv-{i}", "gpu_server", "dgx-h100"))
        t.add_component(Component(f"nic-{i}", "nic", "connectx-7", parent=f"srv-{i}"))
    t.add_component(Component("sw-a", "switch", "qm9700"))
    t.add_component(Component("sw-b", "switch", "qm9700"))
    t.add_component(Component("stor", "storage", "generic-nvmeof-afa"))
    for i in range(5):
        t.add_link(Link(f"l{i}", f"nic-{i}", "sw-a" if i < 3 else "sw-b", speed_Gbps=400))
    t.add_link(Link("ls", "stor", "sw-b", medium="ethernet", speed_Gbps=200))
    found = {(p.code, p.component) for p in validate(t)}
    assert {("server-isolated", "srv-3"), ("server-isolated", "srv-4")} <= found
    assert {("no-storage-path", f"srv-{i}") for i in range(3)} <= found
    assert not {c for c in found if c[1] in ("srv-0", "srv-1", "srv-2") and c[0] == "server-isolated"}
