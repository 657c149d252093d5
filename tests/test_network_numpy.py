"""The network stage's numpy graph routines (no scipy): connected parts, bit-parallel breadth-first
distances and the max-min fair sharing, checked against their definitions written out in plain
Python (a queue-based BFS, progressive filling one flow at a time) and small hand-worked cases."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import deque

import numpy as np
import pytest

from designer.engine import network as net


def _graph(n: int, edges: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    row = np.array([a for a, b in edges] + [b for a, b in edges], dtype=np.int64)
    col = np.array([b for a, b in edges] + [a for a, b in edges], dtype=np.int64)
    return net._csr(row, col, n)


def _bfs(n: int, edges: list[tuple[int, int]], s: int) -> list[int]:
    adj = [[] for _ in range(n)]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    dist = [net._INF] * n
    dist[s] = 0
    q = deque([s])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if dist[v] == net._INF:
                dist[v] = dist[u] + 1
                q.append(v)
    return dist


def _random_graph(rng: random.Random) -> tuple[int, list[tuple[int, int]]]:
    n = rng.randint(1, 90)
    return n, [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 2 * n))]


def test_csr_counts_a_repeated_edge_once_and_sorts_neighbours():
    ptr, idx = _graph(3, [(0, 2), (0, 1), (2, 0)])
    assert ptr.tolist() == [0, 2, 3, 4]
    assert idx.tolist() == [1, 2, 0, 0]


def test_components_of_a_hand_drawn_graph():
    # 0-3-5 | 1-2 | 4 alone | 6-7-8-6 (a triangle): numbered by lowest vertex
    ptr, idx = _graph(9, [(3, 5), (0, 3), (2, 1), (6, 7), (7, 8), (8, 6)])
    assert net._components(ptr, idx).tolist() == [0, 1, 1, 0, 2, 0, 3, 3, 3]


def test_components_of_a_long_chain_numbered_from_its_far_end():
    # the chain's lowest vertex sits at one end: labels must travel its whole length
    n = 5000
    perm = list(range(n))
    random.Random(1).shuffle(perm)
    ptr, idx = _graph(n, [(perm[i], perm[i + 1]) for i in range(n - 1)])
    assert set(net._components(ptr, idx).tolist()) == {0}


@pytest.mark.parametrize("seed", range(40))
def test_components_and_distances_are_those_of_a_plain_bfs(seed):
    rng = random.Random(seed)
    n, edges = _random_graph(rng)
    ptr, idx = _graph(n, edges)
    reach = [_bfs(n, edges, s) for s in range(n)]
    label = net._components(ptr, idx).tolist()
    for a in range(n):
        for b in range(n):
            assert (label[a] == label[b]) == (reach[a][b] < net._INF)
    # parts numbered in the order of their lowest vertex
    firsts = [label[v] for v in range(n) if label[v] not in label[:v]]
    assert firsts == list(range(len(firsts)))
    sources = rng.sample(range(n), rng.randint(1, n))
    got = net._bfs_distances(ptr, idx, sources)
    assert got.dtype == np.int32 and got.shape == (len(sources), n)
    for row, s in zip(got.tolist(), sources):
        assert row == reach[s]


def test_distances_from_more_sources_than_one_batch(monkeypatch):
    monkeypatch.setattr(net, "_BFS_SOURCES", 64)
    n = 150  # a ring: distance min(|i - j|, n - |i - j|)
    ptr, idx = _graph(n, [(i, (i + 1) % n) for i in range(n)])
    sources = list(range(n - 1, -1, -1))
    got = net._bfs_distances(ptr, idx, sources)
    want = [[min(abs(s - j), n - abs(s - j)) for j in range(n)] for s in sources]
    assert got.tolist() == want


def _progressive_filling(paths: list[list[tuple[int, float]]], cap: list[float],
                         demand: list[float]) -> list[float]:
    """Bertsekas & Gallager §6.5.2 written out: raise every unfrozen flow together until a link
    fills or a flow meets its demand, freeze the flows of full links, repeat."""
    rate = [0.0] * len(paths)
    active = [bool(p) and d > 0 for p, d in zip(paths, demand)]
    left = list(cap)
    while any(active):
        load = [0.0] * len(cap)
        for f, p in enumerate(paths):
            if active[f]:
                for a, s in p:
                    load[a] += s
        step = min([left[a] / load[a] for a in range(len(cap)) if load[a] > 0]
                   + [demand[f] - rate[f] for f in range(len(paths)) if active[f]])
        for f in range(len(paths)):
            if active[f]:
                rate[f] += step
        for a in range(len(cap)):
            left[a] -= step * load[a]
        full = {a for a in range(len(cap)) if load[a] > 0 and left[a] <= 1e-9 * max(cap)}
        for f, p in enumerate(paths):
            if active[f] and (rate[f] >= demand[f] - 1e-12 or any(a in full for a, _ in p)):
                active[f] = False
    return rate


def test_max_min_of_the_textbook_line():
    # a line of two links of capacity 1: one long flow over both, one short flow on each link;
    # each link is shared by two flows, so every flow gets 1/2 (worked by hand)
    routes = net.Routes(flow=np.array([0, 0, 1, 2]), arc=np.array([0, 1, 0, 1]),
                        share=np.ones(4), routed=np.ones(3, dtype=bool), hops=np.array([2, 1, 1]))
    sol = net.max_min(routes, np.array([1.0, 1.0]), np.full(3, np.inf))
    assert sol.rate_GBps.tolist() == [0.5, 0.5, 0.5]
    assert sol.arc_load_GBps.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("seed", range(25))
def test_max_min_is_progressive_filling(seed):
    rng = random.Random(seed)
    na, nf = rng.randint(1, 12), rng.randint(1, 30)
    paths = []
    for _ in range(nf):
        arcs = rng.sample(range(na), rng.randint(0, min(na, 4)))
        paths.append([(a, rng.choice([1.0, 0.5, 0.25])) for a in arcs])
    cap = [rng.choice([12.5, 25.0, 50.0, 100.0]) for _ in range(na)]
    demand = [rng.choice([np.inf, 0.0, rng.uniform(1, 60)]) for _ in range(nf)]
    demand = [d if p else 0.0 for d, p in zip(demand, paths)]  # a pathless flow asks nothing
    flow = np.array([f for f, p in enumerate(paths) for _ in p], dtype=np.int64)
    arc = np.array([a for p in paths for a, _ in p], dtype=np.int64)
    share = np.array([s for p in paths for _, s in p])
    routed = np.array([bool(p) for p in paths])
    routes = net.Routes(flow, arc, share, routed, np.array([len(p) for p in paths]))
    want = _progressive_filling(paths, cap, demand)
    sol = net.max_min(routes, np.array(cap), np.array(demand))
    assert sol.rate_GBps.tolist() == pytest.approx(want, rel=1e-9, abs=1e-12)
    load = [sum(s * sol.rate_GBps[f] for f, p in enumerate(paths) for b, s in p if b == a) for a in range(na)]
    assert sol.arc_load_GBps.tolist() == pytest.approx(load, rel=1e-12, abs=1e-12)
    assert all(l <= c * (1 + 1e-9) for l, c in zip(load, cap))


def _routes_of(paths: list[list[tuple[int, float]]]) -> net.Routes:
    flow = np.array([f for f, p in enumerate(paths) for _ in p], dtype=np.int64)
    arc = np.array([a for p in paths for a, _ in p], dtype=np.int64)
    share = np.array([s for p in paths for _, s in p])
    return net.Routes(flow, arc, share, np.array([bool(p) for p in paths]), np.array([len(p) for p in paths]))


def _levels(rates, tol=1e-9) -> int:
    """How many distinct levels (saturation or demand events) the rates hold, to ``tol``."""
    r = np.sort(np.asarray([x for x in rates if x > 0]))
    return int(len(r) and 1 + np.sum(np.diff(r) > tol * np.maximum(r[1:], 1.0)))


@pytest.mark.parametrize("seed", range(20))
def test_max_min_with_many_distinct_demand_caps_is_progressive_filling(seed):
    """Demand caps of many distinct levels (every capped flow its own) among elastic flows, over
    ECMP-like paths (up, across one of several spines, down): the batched rounds give the rates of
    filling one event at a time, in no more rounds than there are distinct levels."""
    rng = random.Random(1000 + seed)
    leaves, spines = rng.randint(2, 5), rng.randint(1, 4)
    # arcs: leaf l -> spine s at l * spines + s, spine s -> leaf l after them; then a host arc per flow
    na_fabric = 2 * leaves * spines
    nf = rng.randint(20, 120)
    paths, cap = [], [rng.choice([25.0, 50.0, 100.0]) for _ in range(na_fabric)]
    for f in range(nf):
        a, b, s = rng.randrange(leaves), rng.randrange(leaves), rng.randrange(spines)
        own = len(cap)
        cap.append(rng.choice([12.5, 25.0, 50.0]))  # the flow's NIC
        p = [(own, 1.0)]
        if a != b:
            p += [(a * spines + s, 1.0), (leaves * spines + b * spines + s, 1.0)]
        paths.append(p)
    demand = [rng.choice([np.inf, rng.uniform(0.05, 30.0)]) for _ in range(nf)]
    want = _progressive_filling(paths, cap, demand)
    sol = net.max_min(_routes_of(paths), np.array(cap), np.array(demand))
    assert sol.rate_GBps.tolist() == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert all(r <= d * (1 + 1e-12) for r, d in zip(sol.rate_GBps, demand))
    assert np.all(sol.arc_load_GBps <= np.array(cap) * (1 + 1e-9))
    assert 1 <= sol.iterations <= _levels(want)


def test_max_min_takes_saturations_on_arcs_sharing_no_flow_in_one_round():
    """K arcs, arc k alone carrying k + 1 flows: K distinct levels (filling one event at a time
    takes K steps), but no flow of one arc crosses another, so every arc is final at once."""
    K = 40
    paths = [[(k, 1.0)] for k in range(K) for _ in range(k + 1)]
    sol = net.max_min(_routes_of(paths), np.full(K, 100.0), np.full(len(paths), np.inf))
    assert sol.iterations == 1
    assert sol.rate_GBps.tolist() == [100.0 / (k + 1) for k in range(K) for _ in range(k + 1)]


def test_max_min_takes_demands_met_below_every_level_in_one_round():
    """1,000 flows of distinct demands on one arc with room for all: each meets its demand in the
    first round (filling one event at a time: 1,000 steps)."""
    n = 1000
    demand = np.arange(1, n + 1) / 8.0
    sol = net.max_min(_routes_of([[(0, 1.0)]] * n), np.array([1e6]), demand)
    assert sol.iterations == 1 and sol.rate_GBps.tolist() == demand.tolist()


@pytest.mark.parametrize("K", [1, 2, 5, 12])
def test_max_min_rounds_follow_a_chain_of_saturations(K):
    """A chain where each arc's level waits for the arc before it: flow 0 on arc 0, flow k
    (1 <= k < K) on arcs k - 1 and k, flow K on arc K - 1. Arc 0 (capacity 1) fills first, at
    1/2; then arc k's other flow k + 1 gets what flow k left: capacities 1, 2.5, 5, 7, ... (2k + 1)
    give rates 1/2, 1/2, 2, 3, ..., K, each arc's level above the one before while its first flow
    grows (k + 1/2 > k). K arcs, K levels, K rounds: the bound (rounds <= levels) is tight."""
    paths = [[(0, 1.0)]] + [[(k - 1, 1.0), (k, 1.0)] for k in range(1, K)] + [[(K - 1, 1.0)]]
    cap = [1.0, 2.5, *(2.0 * k + 1 for k in range(2, K))][:K]
    sol = net.max_min(_routes_of(paths), np.array(cap), np.full(K + 1, np.inf))
    want = _progressive_filling(paths, cap, [np.inf] * (K + 1))
    assert sol.rate_GBps.tolist() == pytest.approx(want, rel=1e-12)
    assert sol.rate_GBps.tolist() == [0.5, 0.5, *map(float, range(2, K + 1))]
    assert _levels(want) == K and sol.iterations == K


def test_the_engine_imports_no_scipy():
    code = "import sys; from designer.engine import pipeline; print(any(m.startswith('scipy') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _pair_topology(kind_of_n1: str = "nic"):
    from designer.topology.model import Component, Link, Topology
    topo = Topology()
    for i in range(3):
        topo.add_component(Component(f"n{i}", kind_of_n1 if i == 1 else "nic", "cx7"))
    topo.add_link(Link("l0", "n0", "n1"))
    return topo


@pytest.mark.parametrize("routing", net.ROUTING)
def test_a_fabric_without_switches_routes_only_direct_links(routing):
    topo = _pair_topology()
    fab = net.fabric_of(topo)
    i = fab.index
    r = net._route(fab, np.array([i["n0"], i["n0"], i["n1"]]), np.array([i["n1"], i["n2"], i["n0"]]),
                   routing, 0)
    assert r.routed.tolist() == [True, False, True]
    assert [fab.link_ids[fab.arc_link[a]] for a in r.arc] == ["l0", "l0"]
    assert r.hops.tolist()[0] == 1 and r.hops.tolist()[2] == 1


def test_structure_follows_ends_and_kinds_not_speeds_or_parents():
    """What an EngineCache compares to share a Fabric (the structure lists) changes with link
    ends and component kinds, not with speeds or parents (every change made through the model:
    its items cannot be changed behind its back)."""
    from designer.topology.model import Component

    def structure(topology):
        return net.structure(topology)[0]

    topo = _pair_topology()
    key = structure(topo)
    topo.update_link("l0", speed_Gbps=100.0)
    topo.add_component(Component("s0", "gpu_server", "dgx-h100"))
    before_parent = structure(topo)
    topo.update_component("n2", parent="s0")
    assert structure(topo) == before_parent != key
    topo.update_link("l0", b="n2")
    moved = structure(topo)
    assert moved != before_parent
    with pytest.raises(AttributeError):
        topo.components["n1"].kind = "dpu"
    assert structure(_pair_topology("dpu")) != structure(_pair_topology())


def test_links_of_through_the_fabric_are_the_topologys():
    from designer.topology.model import Component, Link
    from designer.topology.templates import rail_optimized
    topo = rail_optimized(servers=8).topology
    fab = net.fabric_of(topo)
    assert fab._every_link
    for node in list(topo.components)[::3]:
        assert net.links_of(fab, topo, node) == topo.links_of(node)
    # a link to a rack is not in the fabric: the topology answers
    rack = next(c.id for c in topo.components.values() if c.kind == "rack")
    nic = next(c.id for c in topo.components.values() if c.kind == "nic")
    topo.add_link(Link("odd", nic, rack))
    fab = net.fabric_of(topo)
    assert not fab._every_link
    assert [l.id for l in net.links_of(fab, topo, nic)] == [l.id for l in topo.links_of(nic)]
    assert "odd" in [l.id for l in net.links_of(fab, topo, nic)]


@pytest.mark.parametrize("seed", range(10))
def test_bottleneck_is_the_first_most_utilized_arc_of_each_flow(seed):
    rng = np.random.default_rng(seed)
    nf, na = 30, 12
    pairs = sorted({(int(f), int(a)) for f, a in zip(rng.integers(0, nf, 90), rng.integers(0, na, 90))})
    flow = np.array([f for f, _ in pairs])
    arc = np.array([a for _, a in pairs])
    util = rng.choice([0.0, 0.25, 0.5, 1.0], na)  # ties on purpose
    want = [-1] * nf
    for f in range(nf):
        mine = [a for g, a in pairs if g == f]
        if mine:
            want[f] = max(mine, key=lambda a: (util[a], -mine.index(a)))
    routes = net.Routes(flow, arc, np.ones(len(flow)), np.ones(nf, dtype=bool), np.ones(nf))
    assert net._bottlenecks(routes, util, nf).tolist() == want
    shuffled = rng.permutation(len(flow))  # entries in any order: the first in that order
    routes = net.Routes(flow[shuffled], arc[shuffled], np.ones(len(flow)), np.ones(nf, dtype=bool), np.ones(nf))
    want = [-1] * nf
    for f in range(nf):
        mine = [int(a) for g, a in zip(flow[shuffled], arc[shuffled]) if g == f]
        if mine:
            want[f] = max(mine, key=lambda a: (util[a], -mine.index(a)))
    assert net._bottlenecks(routes, util, nf).tolist() == want


def test_sharp_is_ruled_out_by_the_first_rail_without_rdma_or_by_host_encryption():
    from designer.engine import pipeline
    from designer.engine.placement import servers_of
    from designer.topology.catalog import load_catalog
    from designer.topology.templates import rail_optimized
    cat = load_catalog()
    design = rail_optimized(servers=4)
    servers = servers_of(design, cat)
    assert pipeline.sharp_transport_problem(design, cat, {}, servers) is None
    third = servers[2]
    nic = third.rails[1]
    design.topology.set_prop(nic, "rdma", False)
    servers = servers_of(design, cat)
    why = pipeline.sharp_transport_problem(design, cat, {}, servers)
    assert why.startswith(f"'{nic}' (") and f"of '{third.id}' has no RDMA" in why
    # encryption on the host of an earlier server is named first (servers in order)
    why = pipeline.sharp_transport_problem(design, cat, {"encryption": True}, servers)
    assert why.startswith(f"host-managed encryption on '{servers[0].id}'")
    scen = {"encryption": True, "offload": "dpu", "per_server": {servers[3].id: "host"}}
    assert pipeline.sharp_transport_problem(design, cat, scen, servers).startswith(f"'{nic}' (")


def test_median_of_the_group_rates():
    import math

    from designer.engine.pipeline import _median
    assert _median(np.array([3.0, 1.0, 2.0])) == 2.0
    assert _median(np.array([4.0, 1.0, 3.0, 2.0])) == 2.5
    assert _median(np.array([0.1, 0.2])) == (0.1 + 0.2) / 2
    assert math.isnan(_median(np.zeros(0)))


def test_node_indices_match_by_object_or_by_value():
    from designer.topology.templates import rail_optimized
    topo = rail_optimized(servers=4).topology
    fab = net.fabric_of(topo)
    same = [fab.nodes[i] for i in (5, 0, 5, len(fab.nodes) - 1)]  # the fabric's own strings
    copies = ["".join(list(x)) for x in same]  # equal strings, other objects
    assert all(a is not b for a, b in zip(same, copies))
    names = same + copies + [None, "no-such-node"]
    want = [fab.index.get(x, -1) for x in names]
    assert want[:4] == [5, 0, 5, len(fab.nodes) - 1] and want[-2:] == [-1, -1]
    assert fab.node_indices(names).tolist() == want
    assert fab.node_indices([]).tolist() == []
