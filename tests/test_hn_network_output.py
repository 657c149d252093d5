"""Issue 15 (whole 131k-GPU run): the network stage's inputs and outputs made without per-item
Python work must read and answer as before: flow ends held as rows of name tables
(``traffic.Endpoints``), the ``run --json`` links text, the fabric cache (never stale after an
edit), max-min rounds over the crossed arcs and the routing walk's memo of destination sets."""

from __future__ import annotations

import numpy as np
import pytest

from designer.engine import network as net
from designer.engine.cache import EngineCache
from designer.engine import traffic as tr
from designer.engine.placement import place, servers_of
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

CAT = load_catalog()


# -- flow ends as rows of name tables ---------------------------------------------------------

def test_endpoints_read_as_the_list_of_ids_they_stand_for():
    table = np.array(["a", "b", "c", None], dtype=object)
    e = tr.Endpoints(table, np.array([2, 0, 0, 3, 1]))
    ids = ["c", "a", "a", None, "b"]
    assert len(e) == 5 and bool(e) and not tr.Endpoints(table, np.zeros(0, dtype=np.int64))
    assert list(e) == ids and e == ids and ids == e and e != ids[:-1] and e != ids[:-1] + ["x"]
    assert [e[i] for i in range(-5, 5)] == ids + ids and e[1:4] == ids[1:4]
    with pytest.raises(IndexError):
        e[5]
    with pytest.raises(IndexError):
        e[-6]
    # + with a list (either side) or another Endpoints keeps the order
    both = e + ["x", "y"]
    assert isinstance(both, tr.Endpoints) and both == ids + ["x", "y"] and both[6] == "y"
    assert ["x"] + e == ["x"] + ids and e + e == ids + ids
    assert list(zip(e, e)) == list(zip(ids, ids))


def test_node_indices_of_endpoints_are_those_of_their_ids():
    """The fabric looks up each table once; the answer is the per-id one, with ids that are not
    nodes (None, an unknown name, an equal string made elsewhere) as a dict look-up gives."""
    topo = rail_optimized(servers=4).topology
    fab = net.fabric_of(topo)
    copy = "".join(list(fab.nodes[3]))
    table = np.array([fab.nodes[5], None, "no-such-node", copy, fab.nodes[0]], dtype=object)
    rows = np.array([0, 4, 1, 2, 3, 3, 0])
    e = tr.Endpoints(table, rows) + [fab.nodes[7], "nope"]
    want = [fab.index.get(x, -1) for x in list(e)]
    assert want == [5, 0, -1, -1, 3, 3, 5, 7, -1]
    assert fab.node_indices(e).tolist() == want == fab.node_indices(list(e)).tolist()
    assert fab.node_indices(e).tolist() == want  # the remembered table answers the same


def test_phase_flows_name_the_same_ends_as_the_rail_table():
    """Ring flows hold rows of the rail table: the ids they give are the table's names at those
    rows, and extending them with storage flows (a list) keeps both parts."""
    design = rail_optimized(servers=8)
    servers = servers_of(design, CAT)
    from types import SimpleNamespace
    pl = place(SimpleNamespace(gpus=64, tp=2, pp=2, dp=16, cp=1), servers)
    t = pl.rail_table()
    f = tr.ring_flows(pl, "dp")
    assert isinstance(f.src, tr.Endpoints) and len(f.src) == len(f.demand) > 0
    (table, rows), = f.src.segments()
    assert table is t.names and list(f.src) == t.names[rows].tolist()
    stor = tr.FlowSet(["st-a", "st-b"], [t.names[0], t.names[1]], np.ones(2), np.full(2, -1),
                      ["storage"] * 2, np.zeros(2, dtype=np.int64))
    both = f.extend(stor)
    assert list(both.src) == list(f.src) + ["st-a", "st-b"]
    assert list(both.dst) == list(f.dst) + [t.names[0], t.names[1]]
    fab = net.fabric_of(design.topology)
    assert fab.node_indices(both.dst).tolist() == [fab.index.get(x, -1) for x in both.dst]


# -- the run --json links text -------------------------------------------------------------------

def _link_results(ids, seed):
    import math
    rng = np.random.default_rng(seed)
    util = rng.choice([0.0, -0.0, 0.5, 1.0, 1 / 3, math.nan, 1e-320], len(ids))
    codes = rng.integers(0, 3, len(ids))
    names = ["", "dp", "p\u00e9"]
    return util, names, codes


@pytest.mark.parametrize("odd", [None, 'q"', "b\\s", "t\tab", "\u00e9", "del\x7f", "~ok~"])
@pytest.mark.parametrize("indent,level", [(1, 0), (1, 1), (2, 3), (0, 1)])
def test_links_text_is_json_dumps_with_plain_ids_or_one_odd_one(odd, indent, level):
    """Plain ids (printable ASCII, no quote or backslash) go into the text as they are; one id
    json escapes anywhere among them sends all through the encoder: the text is json.dumps' in
    both cases, from a list of phases or from phase codes."""
    import json
    from designer.engine.result import LinkResults
    ids = [f"link-{i}" for i in range(50)]
    if odd is not None:
        ids[17] = odd + "17"
    util, names, codes = _link_results(ids, len(ids) + indent)
    phase = [names[c] for c in codes]
    want = json.dumps([{"id": i, "utilization": None if u != u else float(u), "phase": p}
                       for i, u, p in zip(ids, util, phase)], indent=indent)
    want = want.replace("\n", "\n" + " " * (indent * level))  # as it stands level deep
    listed = LinkResults(ids, util, phase)
    coded = LinkResults.from_codes(ids, util, names, codes)
    assert listed.json_text(indent, level) == want == coded.json_text(indent, level)
    assert coded.phase == phase and coded.to_json() == listed.to_json()  # (NaN is not equal to itself)
    one = LinkResults.from_codes(ids[:1], util[:1], names, codes[:1])
    assert one.json_text(indent, level) == LinkResults(ids[:1], util[:1], phase[:1]).json_text(indent, level)


def test_coded_phases_are_checked():
    from designer.engine.result import LinkResults
    with pytest.raises(ValueError):
        LinkResults.from_codes(["a", "b"], np.zeros(2), ["x"], np.array([0, 1]))
    with pytest.raises(ValueError):
        LinkResults.from_codes(["a", "b"], np.zeros(2), ["x"], np.array([0]))


# -- the fabric cache: an edited topology never gets a stale Fabric --------------------------------

def _arrays(fab):
    return (fab.nodes, fab.is_switch.tolist(), fab.link_ids, fab.arc_src.tolist(), fab.arc_dst.tolist(),
            fab.out_arc.tolist(), fab._sw_idx.tolist())


def _fresh(topo):
    """The Fabric made from scratch (no cache)."""
    lists, links = net.structure(topo)
    return net.new_fabric(lists, links)


def test_fabric_follows_every_edit_and_undo():
    from designer.gui.commands import apply_event, record
    from designer.topology.model import Component
    cache = EngineCache()
    design = rail_optimized(servers=4)
    topo = design.topology
    fab0 = cache.fabric(topo)
    assert cache.fabric(topo) is fab0 and _arrays(fab0) == _arrays(_fresh(topo))
    # a speed edit or a scenario change keeps the structure: same Fabric, fresh capacities
    lid = fab0.link_ids[0]
    cap0 = net.arc_capacity_GBps(fab0, topo)
    events = record(design, lambda d: d.topology.update_link(lid, speed_Gbps=100.0))
    design.set("scenario", {**design.scenario, "routing": "adaptive"})
    assert cache.fabric(topo) is fab0
    cap1 = net.arc_capacity_GBps(fab0, topo)
    assert cap1[fab0.arc_link == 0].tolist() == [12.5, 12.5] != cap0[fab0.arc_link == 0].tolist()
    # move a link's end, then undo it
    link = topo.links[lid]
    other = next(c.id for c in topo.components.values() if c.kind == "switch" and c.id not in (link.a, link.b))
    moved = record(design, lambda d: d.topology.update_link(lid, b=other))
    fab1 = cache.fabric(topo)
    assert fab1 is not fab0 and _arrays(fab1) == _arrays(_fresh(topo)) != _arrays(fab0)
    for ev in reversed(moved):
        apply_event(design, ev, forward=False)
    assert _arrays(cache.fabric(topo)) == _arrays(fab0) == _arrays(_fresh(topo))
    for ev in reversed(events):
        apply_event(design, ev, forward=False)
    assert cache.fabric(topo) is fab0  # a speed undo changes no structure: the cached one
    # add a switch and a link to it; remove a component; each time the fabric is the new topology's
    record(design, lambda d: (d.topology.add_component(Component("sw-new", "switch", "qm9700")),
                              d.topology.add_new_link("sw-new", other, "infiniband", 400.0)))
    fab2 = cache.fabric(topo)
    assert "sw-new" in fab2.index and fab2.is_switch[fab2.index["sw-new"]]
    assert _arrays(fab2) == _arrays(_fresh(topo))
    gone = next(c.id for c in topo.components.values() if c.kind == "nic")
    record(design, lambda d: d.topology.remove_component(gone))
    fab3 = cache.fabric(topo)
    assert gone not in fab3.index and _arrays(fab3) == _arrays(_fresh(topo))


def test_an_edit_made_while_the_structure_is_read_is_seen_by_the_next_call(monkeypatch):
    """Another thread edits the topology after fabric_of read its structure (here: the edit is
    made right after the read): the Fabric then made is of the structure before the edit, and
    the next call must not take it for the edited topology's."""
    cache = EngineCache()
    design = rail_optimized(servers=4)
    topo = design.topology
    lid = next(iter(topo.links))
    read = net.structure

    def read_then_edit(topology):
        got = read(topology)
        monkeypatch.setattr(net, "structure", read)  # once
        topology.remove_link(lid)
        return got

    monkeypatch.setattr(net, "structure", read_then_edit)
    before = cache.fabric(topo)
    assert lid in before.link_ids  # made from what was read, before the edit
    after = cache.fabric(topo)
    assert lid not in after.link_ids and _arrays(after) == _arrays(_fresh(topo))


def test_equal_structures_share_a_fabric_and_a_cleared_one_is_rebuilt():
    """A copy of the topology (other objects, equal lists) finds the cached Fabric by comparing
    its structure lists; a cleared topology, or one refilled differently, does not."""
    from designer.topology.fileformat import loads
    from designer.topology.fileformat import dumps
    cache = EngineCache()
    design = rail_optimized(servers=4)
    fab = cache.fabric(design.topology)
    assert cache.fabric(design.topology.copy()) is fab
    again = loads(dumps(design))  # equal strings, made anew
    assert again.topology.components.keys() == design.topology.components.keys()
    assert cache.fabric(again.topology) is fab
    design.topology.clear()
    empty = cache.fabric(design.topology)
    assert empty is not fab and empty.nodes == [] and len(empty.arc_src) == 0


@pytest.mark.parametrize("odd", [7, None, type("Name", (str,), {"__str__": lambda self: "other"})("sub")])
def test_result_text_with_an_id_that_is_not_a_plain_string_is_json_dumps(odd):
    import json
    from designer.engine.result import LinkResults, Result
    ids = ["l0", odd, "l2"]
    links = LinkResults(ids, np.array([0.5, 1.0, 0.0]), ["dp", "pp", ""])
    r = Result(iteration_time_s=1.0, breakdown_s={"compute": 1.0}, tflops_per_gpu=1.0, mfu=0.1,
               percent_of_peak=10.0, tokens_per_s=1.0, training_time_days=1.0, gpus=8, parameters=1.0,
               workload={}, placement={}, collectives=[], links=links, bottlenecks=[])
    assert r.json_text() == json.dumps(r.to_json(), indent=1)


# -- max-min fairness over the arcs the flows cross -------------------------------------------------

def _max_min_over_every_arc(routes, capacity, demand):
    """Progressive filling as written before the rounds were limited to the crossed arcs and took
    independent events together: one common step per round, every pass over all arcs (the
    reference the batched rounds must agree with to rounding, in no more rounds)."""
    nf, na = len(demand), len(capacity)
    rate = np.zeros(nf)
    remaining = capacity.astype(float).copy()
    active = routes.routed & (demand > 0)
    tol = 1e-9 * max(1.0, float(capacity.max()) if na else 1.0)
    live = np.flatnonzero(active[routes.flow])
    e_flow, e_arc, e_share = routes.flow[live], routes.arc[live], routes.share[live]
    it = 0
    while active.any():
        it += 1
        load = np.bincount(e_arc, weights=e_share, minlength=na)
        used = load > 1e-12
        step = float(np.min(remaining[used] / load[used])) if used.any() else np.inf
        step = max(min(step, float((demand[active] - rate[active]).min())), 0.0)
        rate[active] += step
        remaining -= step * load
        saturated = used & (remaining <= tol + 1e-9 * capacity)
        frozen = rate >= demand - 1e-12
        frozen[e_flow[saturated[e_arc]]] = True
        newly = active & frozen
        if not newly.any():
            tight = np.argmin(np.where(used, remaining / np.maximum(load, 1e-30), np.inf))
            newly = np.zeros(nf, dtype=bool)
            newly[e_flow[e_arc == tight]] = True
            newly &= active
        active &= ~newly
        keep = active[e_flow]
        e_flow, e_arc, e_share = e_flow[keep], e_arc[keep], e_share[keep]
    return rate, it


@pytest.mark.parametrize("seed", range(12))
def test_max_min_rates_are_those_of_rounds_over_every_arc(seed):
    rng = np.random.default_rng(seed)
    nf, na = int(rng.integers(1, 40)), int(rng.integers(1, 60))
    pairs = sorted({(int(f), int(a)) for f, a in zip(rng.integers(0, nf, 3 * nf), rng.integers(0, na, 3 * nf))})
    flow = np.array([f for f, _ in pairs], dtype=np.int64)
    arc = np.array([a for _, a in pairs], dtype=np.int64)
    share = rng.choice([1.0, 0.5, 0.25, 1 / 3], len(flow))
    routed = (rng.random(nf) < 0.9) & np.isin(np.arange(nf), flow)  # a routed flow crosses an arc
    routes = net.Routes(flow, arc, share, routed, np.ones(nf))
    capacity = rng.choice([12.5, 25.0, 50.0, 0.1 + 0.2, 100.0], na)
    demand = np.where(rng.random(nf) < 0.6, np.inf, rng.choice([0.0, 1.0, 7.5, 30.0], nf))
    sol = net.max_min(routes, capacity, demand)
    rate, it = _max_min_over_every_arc(routes, capacity, demand)
    # a rate is now its arc's level (c - F) / S, not a sum of steps: equal to rounding
    assert sol.rate_GBps.tolist() == pytest.approx(rate.tolist(), rel=1e-13, abs=1e-13)
    assert 1 <= sol.iterations <= it or not (routes.routed & (demand > 0)).any()
    util = sol.arc_utilization
    assert util.tolist() == np.divide(sol.arc_load_GBps, capacity, out=np.zeros(na), where=capacity > 0).tolist()
    with pytest.raises(ValueError):
        util[0] = 1.0  # the kept utilization is read-only


@pytest.mark.parametrize("routing", net.ROUTING)
def test_phases_sending_to_the_same_endpoints_route_as_alone(routing):
    """The destination work kept on the fabric for a second flow set to the same endpoints gives
    the routes a fabric that never saw the first set gives."""
    topo = rail_optimized(servers=16, su_size=4).topology
    fab = net.fabric_of(topo)
    nics = np.array([fab.index[c.id] for c in topo.components.values() if c.kind == "nic"])
    rng = np.random.default_rng(3)
    dst = rng.permutation(nics)
    first = net._route(fab, rng.permutation(nics), dst, routing, 0)
    second_src = rng.permutation(nics)
    again = net._route(fab, second_src, dst, routing, 1)
    alone = net._route(_fresh(topo), second_src, dst, routing, 1)
    for a, b in ((again, alone),):
        assert a.flow.tolist() == b.flow.tolist() and a.arc.tolist() == b.arc.tolist()
        assert a.share.tolist() == b.share.tolist() and a.hops.tolist() == b.hops.tolist()
        assert a.routed.tolist() == b.routed.tolist()
    assert len(fab._destinations) == 1 and first.routed.any()


def test_remembered_fabrics_live_only_as_long_as_the_cache_keeps_them():
    """The per-topology memo holds its Fabric weakly: a fabric pushed out of the cache of four
    is freed (a 131k-GPU fabric with its routes is hundreds of MB), and asking again rebuilds it."""
    import gc
    import weakref
    cache = EngineCache()
    topos = [rail_optimized(servers=k).topology for k in (2, 3, 4, 5, 6)]  # five structures
    fabs = [weakref.ref(cache.fabric(t)) for t in topos]
    gc.collect()
    assert fabs[0]() is None and all(f() is not None for f in fabs[1:])
    assert cache.fabric(topos[-1]) is fabs[-1]()
    again = cache.fabric(topos[0])
    assert _arrays(again) == _arrays(_fresh(topos[0])) and len(cache.fabrics()) == 4
