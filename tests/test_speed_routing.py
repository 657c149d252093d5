"""Routing by equivalence classes (issue 15) gives the routes of the plain definition (module
docstring of ``engine.network``): every flow walks hop by hop; at a node its candidates are the
out-links whose far end is its destination (distance 0) or a switch nearest to it (1 + hops from
that switch to the nearest switch the destination hangs off); ECMP takes one of the equal-cost
candidates by the flow's hash at that node, adaptive splits evenly over all of them. The reference
here walks every flow on its own with networkx distances, on random fabrics with parallel links,
multi-homed and directly linked endpoints, unreachable parts and parts of the same shape."""

from __future__ import annotations

import random
from collections import defaultdict

import networkx as nx
import numpy as np
import pytest

from designer.engine import network as net
from designer.topology.model import Component, Link, Topology

INF = float("inf")


def random_fabric(seed: int) -> Topology:
    rng = random.Random(seed)
    t = Topology()
    planes = rng.choice([1, 2, 3])
    for p in range(planes):  # identical planes (rail-like), then random extra links
        for i in range(4):
            t.add_component(Component(f"sw{p}-{i}", "switch", "qm9700"))
        for i, j in ((0, 2), (0, 3), (1, 2), (1, 3)):
            t.add_link(Link(f"up{p}-{i}{j}", f"sw{p}-{i}", f"sw{p}-{j}"))
    switches = [c for c in t.components]
    for k in range(rng.randint(6, 14)):
        t.add_component(Component(f"ep{k}", "nic", "connectx-7"))
        for _ in range(rng.choice([0, 1, 1, 1, 2])):
            t.add_link(Link(f"l{k}-{len(t.links)}", f"ep{k}", rng.choice(switches)))
    eps = [c for c in t.components if c.startswith("ep")]
    for _ in range(rng.randint(0, 4)):  # switch-switch extras (parallel links too), direct links
        a, b = rng.sample(switches, 2)
        t.add_link(Link(f"x{len(t.links)}", a, b))
    for _ in range(rng.randint(0, 2)):
        a, b = rng.sample(eps, 2)
        t.add_link(Link(f"d{len(t.links)}", a, b))
    return t


def reference(fab: net.Fabric, src, dst, routing: str, seed: int):
    sw = [i for i in range(len(fab.nodes)) if fab.is_switch[i]]
    g = nx.MultiGraph()
    g.add_nodes_from(sw)
    for a, b in zip(fab.arc_src, fab.arc_dst):
        if fab.is_switch[a] and fab.is_switch[b]:
            g.add_edge(int(a), int(b))
    hops = {s: nx.single_source_shortest_path_length(g, s) for s in sw}
    out = defaultdict(list)  # node -> out arcs in the fabric's out-arc order
    for a in fab.out_arc:
        out[int(fab.arc_src[a])].append(int(a))

    def dist(head: int, t: int) -> float:
        if head == t:
            return 0
        if not fab.is_switch[head]:
            return INF
        near = [int(fab.arc_dst[a]) for a in out[t] if fab.is_switch[fab.arc_dst[a]]]
        return 1 + min((hops[head].get(s, INF) for s in near), default=INF)

    fh = net._mix(np.arange(len(src), dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                  + net._mix(src * 1_000_003 + dst) + np.uint64(seed))
    share, routed, nhops = defaultdict(float), [], []
    for f, (s, t) in enumerate(zip(src.tolist(), dst.tolist())):
        front, ok, steps = {s: 1.0}, s != t, 0
        while front and ok:
            nxt = defaultdict(float)
            for node, mass in front.items():
                if node == t:
                    continue
                cands = [(a, dist(int(fab.arc_dst[a]), t)) for a in out[node]]
                best = min((d for _, d in cands), default=INF)
                if best == INF:
                    ok = False
                    break
                valid = [a for a, d in cands if d == best]
                if routing == "ecmp":
                    pick = int(net._mix(fh[f:f + 1] ^ net._mix(np.array([node])))[0] % np.uint64(len(valid)))
                    valid = [valid[pick]]
                for a in valid:
                    share[(f, a)] += mass / len(valid)
                    nxt[int(fab.arc_dst[a])] += mass / len(valid)
            if not ok:
                break
            front = {n: m for n, m in nxt.items() if n != t}
            steps += bool(nxt)
        routed.append(ok)
        nhops.append(steps if ok else None)
    return share, routed, nhops


@pytest.mark.parametrize("routing", ["ecmp", "adaptive"])
@pytest.mark.parametrize("seed", range(12))
def test_routes_are_those_of_the_definition(seed, routing):
    topo = random_fabric(seed)
    fab = net.fabric_of(topo)
    eps = [fab.index[c] for c in topo.components if c.startswith("ep")]
    rng = random.Random(seed)
    pairs = [(rng.choice(eps), rng.choice(eps)) for _ in range(40)]
    src = np.array([a for a, _ in pairs], dtype=np.int64)
    dst = np.array([b for _, b in pairs], dtype=np.int64)
    got = net._route(fab, src, dst, routing, seed)
    share, routed, nhops = reference(fab, src, dst, routing, seed)
    assert got.routed.tolist() == routed
    mine = {(int(f), int(a)): float(s) for f, a, s in zip(got.flow, got.arc, got.share) if routed[int(f)]}
    assert mine.keys() == share.keys() - {k for k in share if not routed[k[0]]}
    for k, v in mine.items():
        assert v == pytest.approx(share[k], rel=1e-12)
    for f, h in enumerate(nhops):
        if h is not None:
            assert got.hops[f] == h


def test_parts_of_the_same_shape_share_their_searches():
    topo = Topology()
    for p in range(3):
        for i in range(3):
            topo.add_component(Component(f"s{p}{i}", "switch", "qm9700"))
        topo.add_link(Link(f"a{p}", f"s{p}0", f"s{p}1"))
        topo.add_link(Link(f"b{p}", f"s{p}1", f"s{p}2"))
    fab = net.fabric_of(topo)
    parts = fab.parts()
    assert len(set(parts.label.tolist())) == 3 and set(parts.shape_of.tolist()) == {0}
    rows = np.array([fab.switch_pos[fab.index[f"s{p}0"]] for p in range(3)])
    flat, starts = fab.distances_from(rows)
    assert len(set(starts.tolist())) == 1  # one search for the three planes
    assert flat[starts[0]:starts[0] + 3].tolist() == [0, 1, 2]
