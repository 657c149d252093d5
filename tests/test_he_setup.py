"""The engine's setup stages done once per kind of server or link: ``ServerInfo.alike`` numbers
the servers alike (the resources stage and the SHARP check work per number), and the arc
capacities are read with one map per link field (``pipeline.usable_capacity_GBps``)."""

from dataclasses import replace

import numpy as np
import pytest

from designer.engine import congestion
from designer.engine import network as net
from designer.engine import pipeline
from designer.engine.placement import servers_of
from designer.engine.resources_adapter import _server_key
from designer.errors import UsageError
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

CAT = load_catalog()


def _mixed():
    """Four rail-optimized servers; server 1 has a ConnectX-8 on its rail 2 and server 3 an
    override on its rail 5: three kinds of server."""
    d = rail_optimized(servers=4, catalog=CAT)
    servers = servers_of(d, CAT)
    d.topology.update_component(servers[1].rails[2], model="connectx-8")
    d.topology.set_prop(servers[3].rails[5], "power_W", 30.0)
    return d


def test_servers_alike_share_a_number_exactly_when_their_resource_keys_are_equal():
    d = _mixed()
    servers = servers_of(d, CAT)
    comps = d.topology.components
    numbers = [s.alike for s in servers]
    assert numbers[0] == numbers[2] and len({numbers[0], numbers[1], numbers[3]}) == 3
    keys = [_server_key(comps[s.id], s.adapters, "host") for s in servers]
    for a in range(4):
        for b in range(4):
            assert (numbers[a] == numbers[b]) == (keys[a] == keys[b])


def _without_numbers(monkeypatch):
    """``pipeline.servers_of`` as a caller that does not number its servers (alike -1)."""
    real = pipeline.servers_of
    monkeypatch.setattr(pipeline, "servers_of",
                        lambda *a, **k: [replace(s, alike=-1) for s in real(*a, **k)])


@pytest.mark.parametrize("scenario", [{}, {"offload": "dpu"}, {"offload": "smartnic", "encryption": True},
                                      {"per_server": {"srv-2": "dpu"}}])
def test_the_resources_stage_is_the_same_with_the_numbers_or_without(monkeypatch, scenario):
    """Grouping by number gives the groups (counts, figures) that grouping by key gives."""
    d = _mixed()
    kw = dict(workload="gpt3-175b", tp=8, pp=1, scenario=scenario)
    numbered = pipeline.run(d, CAT, **kw)
    _without_numbers(monkeypatch)
    plain = pipeline.run(d, CAT, **kw)
    assert numbered.resources == plain.resources
    assert numbered.iteration_time_s == plain.iteration_time_s


def test_sharp_check_finds_a_rail_without_rdma_on_a_server_of_its_own_kind():
    d = rail_optimized(servers=4, catalog=CAT)
    servers = servers_of(d, CAT)
    assert len({s.alike for s in servers}) == 1
    nic = servers[3].rails[6]
    d.topology.set_prop(nic, "rdma", False)
    servers = servers_of(d, CAT)
    assert len({s.alike for s in servers}) == 2
    why = pipeline.sharp_transport_problem(d, CAT, {"offload": "dpu"}, servers)
    assert why.startswith(f"'{nic}' (") and f"of '{servers[3].id}'" in why
    # the same answer without the numbers (servers made elsewhere)
    assert pipeline.sharp_transport_problem(d, CAT, {"offload": "dpu"},
                                            [replace(s, alike=-1) for s in servers]) == why


def _reference_capacity(fab, topo, routing):
    """The arc capacities as the network stage and congestion module compute them."""
    return net.arc_capacity_GBps(fab, topo) * \
        congestion.capacity_factors(net.link_media(fab, topo), routing)[fab.arc_link]


@pytest.mark.parametrize("routing", ["ecmp", "adaptive"])
def test_usable_capacity_is_the_line_rate_times_the_medium_factor(routing):
    d = rail_optimized(servers=4, catalog=CAT)
    topo = d.topology
    links = list(topo.links.values())
    topo.update_link(links[0].id, medium="ethernet")
    topo.update_link(links[1].id, lanes=2)
    topo.update_link(links[2].id, speed_Gbps=199.7)
    links = list(topo.links.values())
    fab = net.fabric_of(topo)
    cap = pipeline.usable_capacity_GBps(fab, topo, {"routing": routing})
    assert np.array_equal(cap, _reference_capacity(fab, topo, routing))
    i = fab.link_ids.index(links[0].id)
    ib = fab.link_ids.index(links[3].id)
    if routing == "ecmp":  # RoCE under DCQCN keeps less of its line rate than InfiniBand
        assert cap[i] / (links[0].speed_Gbps / 8) < cap[ib] / (links[3].speed_Gbps / 8)
    assert cap[fab.link_ids.index(links[1].id)] == 2 * cap[ib]
    for link in links:  # all ethernet: one factor for every link
        topo.update_link(link.id, medium="ethernet")
    assert np.array_equal(pipeline.usable_capacity_GBps(fab, topo, {"routing": routing}),
                          _reference_capacity(fab, topo, routing))


def test_a_link_that_carries_nothing_is_named():
    d = rail_optimized(servers=2, catalog=CAT)
    link = list(d.topology.links.values())[3]
    d.topology.update_link(link.id, lanes=0)
    with pytest.raises(UsageError, match=f"link '{link.id}'"):
        pipeline.usable_capacity_GBps(net.fabric_of(d.topology), d.topology, {})


def test_storage_and_switch_figures_are_each_components_own():
    """Resolved once per model and overrides, the figures are still each component's: an
    override (even one that cannot be a dict key) changes only its component's figures."""
    from designer.engine.placement import components_by_kind
    from designer.engine.resources_adapter import _storage_and_switches
    from designer.topology.validation import Resolver
    d = rail_optimized(servers=4, catalog=CAT)
    topo = d.topology
    switches = [c for c in topo.components.values() if c.kind == "switch"]
    topo.set_prop(switches[1].id, "power_W", 1234.0)
    topo.set_prop(switches[2].id, "power_W", 1234)  # the same value as an int
    topo.set_prop(switches[3].id, "ports", [1, 2])  # not hashable
    stores = [c for c in topo.components.values() if c.kind == "storage"]
    topo.set_prop(stores[0].id, "read_GBps", 10)  # an int where the model has a float: figures as written
    topo.set_prop(switches[4].id, "tier", "spine")  # another override: the model's power
    switches = [c for c in topo.components.values() if c.kind == "switch"]
    want = [float(CAT.resolve(c).get("power_W", 0)) for c in switches]
    for kinds in (None, components_by_kind(topo)):
        stor, got = _storage_and_switches(topo, Resolver(CAT), kinds)
        assert got == want
        assert stor == [CAT.resolve(c) for c in topo.components.values() if c.kind == "storage"]
        got_types = [type(s["read_GBps"]) for s in stor]
        assert got_types == [type(CAT.resolve(c)["read_GBps"]) for c in topo.components.values()
                             if c.kind == "storage"]
    assert got[1] == got[2] == 1234.0 and got[0] == got[4] != 1234.0


@pytest.mark.parametrize("seed", range(6))
def test_attached_all_is_topology_attached_for_every_server(seed):
    """Adapters listed in runs or scattered, slots in order, out of order, repeated or missing:
    each server's adapters come out as ``Topology.attached`` gives them (by slot, then id)."""
    import random

    from designer.engine.placement import attached_all
    from designer.topology.model import Component, Topology
    rng = random.Random(seed)
    comps = [Component(f"srv-{k}", "gpu_server", "dgx-h100") for k in range(6)]
    adapters = []
    for k in range(6):
        for j in range(rng.randint(0, 5)):
            slot = [j, 10 - j, rng.randint(0, 3), None][k % 4] if seed % 2 else j
            adapters.append(Component(f"a{k}-{j}", rng.choice(["nic", "dpu"]), "connectx-7",
                                      parent=f"srv-{k}", slot=slot))
    adapters.append(Component("stray", "nic", "connectx-7", parent="nowhere", slot=0))
    if seed >= 2:
        rng.shuffle(adapters)  # runs broken up
    if seed >= 4:  # runs of one parent that join out of order
        adapters.sort(key=lambda c: (c.kind, c.parent))
    topo = Topology.from_items(comps + adapters, [])
    servers = {c.id for c in comps}
    got = attached_all(topo, servers, [c for c in adapters if c.kind == "nic"] +
                       [c for c in adapters if c.kind == "dpu"])
    want = {s: topo.attached(s) for s in servers if topo.attached(s)}
    assert got == want
    assert attached_all(topo, servers) == want


def _info(name, rails, nets, gpus=2, domain=2):
    from designer.engine.placement import ServerInfo
    return ServerInfo(name, gpus, {}, domain, True, 5, rails, networks=nets)


def test_rail_table_reads_each_rails_own_networks_however_the_dicts_are_keyed():
    """A rail's networks are its server's ``networks[rail]``, empty when missing, even when the
    servers' dicts, joined, happen to list the rails in order (server a lacks y, b holds it)."""
    from designer.engine.placement import RailTable
    one, two, three = frozenset({1}), frozenset({2}), frozenset({3})
    cases = [
        [_info("a", ("x", "y"), {"x": one, "y": two}), _info("b", ("z",), {"z": three})],  # as servers_of
        [_info("a", ("x", "y"), {"x": one}), _info("b", ("z",), {"y": two, "z": three})],
        [_info("a", ("x", "y"), {"y": two, "x": one}), _info("b", ("z",), {})],
    ]
    for servers in cases:
        table = RailTable.of(servers, np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]))
        want = [s.networks.get(e, frozenset()) for s in servers for e in s.rails] + [frozenset()]
        assert [table.sets[k] for k in table.net.tolist()] == want
        assert table.names.tolist() == ["x", "y", "z", None]


def test_tp_inside_the_nvlink_domain_of_every_used_server():
    from designer.engine.placement import place
    from designer.engine.workload import Workload
    servers = [_info("a", ("a0",), {}, gpus=4, domain=4), _info("b", ("b0",), {}, gpus=4, domain=2),
               _info("c", ("c0",), {}, gpus=4, domain=2)]
    # tp 4 on the first server only (one rank group): inside a's domain of 4
    assert place(Workload(tp=4, pp=1, dp=1, global_batch=1), servers).summary()["tp_inside_nvlink_domain"]
    # two groups: the second on b, whose domain holds 2
    assert not place(Workload(tp=4, pp=1, dp=2, global_batch=2), servers).summary()["tp_inside_nvlink_domain"]
    assert place(Workload(tp=2, pp=1, dp=6, global_batch=6), servers).summary()["tp_inside_nvlink_domain"]


@pytest.mark.parametrize("order", ["tp,pp,dp", "tp,dp,pp", "pp,tp,dp", "pp,dp,tp", "dp,tp,pp", "dp,pp,tp"])
def test_groups_are_the_ranks_sorted_by_the_other_coordinates(order):
    """Each group of d holds the ranks with the same other coordinates, by d's coordinate; the
    groups ordered by the other coordinates, the outer one of the nesting first."""
    from designer.engine.placement import place
    from designer.engine.workload import Workload
    servers = [_info(f"s{k}", (f"s{k}r",), {}, gpus=4, domain=4) for k in range(12)]
    w = Workload(tp=2, pp=3, dp=8, global_batch=8)
    pl = place(w, servers, order)
    dims = order.split(",")
    size = {"tp": 2, "pp": 3, "dp": 8}
    coord, stride = {}, 1
    for d in dims:
        coord[d] = [(r // stride) % size[d] for r in range(48)]
        stride *= size[d]
    for d in ("tp", "pp", "dp"):
        others = [o for o in dims if o != d]
        want = sorted(range(48), key=lambda r: (coord[others[0]][r], coord[others[1]][r], coord[d][r]))
        assert pl.groups[d].shape == (48 // size[d], size[d])
        assert pl.groups[d].ravel().tolist() == want


def test_the_lowest_line_rate_of_endpoints_with_one_link_or_several():
    from designer.engine.pipeline import _line_GBps, _min_line_GBps
    d = rail_optimized(servers=4, catalog=CAT)
    topo = d.topology
    servers = servers_of(d, CAT)
    eps = [e for s in servers for e in s.rails]
    fab = net.fabric_of(topo)
    assert _min_line_GBps(topo, eps, fab) == min(_line_GBps(topo, e, fab) for e in eps) == 50.0
    slow = topo.links_of(eps[5])[0]
    topo.update_link(slow.id, speed_Gbps=100)
    assert _min_line_GBps(topo, eps, fab) == 12.5
    # a NIC with two links: its rate is their sum (200 + 400 Gb/s), above the slow one's
    sw = next(c.id for c in topo.components.values() if c.kind == "switch")
    topo.add_new_link(eps[5], sw, "infiniband", 200)
    fab = net.fabric_of(topo)
    assert _line_GBps(topo, eps[5], fab) == 37.5
    assert _min_line_GBps(topo, eps, fab) == 37.5
    assert _min_line_GBps(topo, [eps[5]], fab) == 37.5 and _min_line_GBps(topo, eps[6:9], fab) == 50.0


def _sharp_trees_counting_every_switch(ph, mask, heads, names, figs, fab, topology, group_job):
    """``pipeline._sharp_trees`` as it was: the (switch, group) pairs of every switch counted."""
    on = mask[ph.routes.flow]
    grp = ph.flows.group[ph.routes.flow[on]]
    width = int(grp.max()) + 1 if len(grp) else 1
    key = net.sorted_unique(fab.arc_dst[ph.routes.arc[on]] * width + grp)
    pairs = (key // width, key % width)
    need = np.bincount(pairs[0], minlength=len(fab.nodes))[heads]
    limit = np.array([int(f.get("sharp_trees") or 0) for f in figs])
    out = {"sharp_groups_per_switch": int(need.max()), "sharp_trees": int(limit.min())}
    over = need - limit
    if over.max() > 0:
        i = int(np.argmax(over))
        there = pairs[1][pairs[0] == heads[i]]
        out.update(sharp_switch=names[i], sharp_switch_model=topology.components[names[i]].model,
                   sharp_switch_trees=int(limit[i]), sharp_switch_groups=int(need[i]),
                   sharp_switch_jobs=len(net.sorted_unique(group_job[there])))
    return out


@pytest.mark.parametrize("switch, tenants", [("qm8700", 2), ("qm9700", 2), ("qm8700", 1)])
def test_sharp_trees_count_only_the_switches_asked_about_with_the_same_answer(monkeypatch, switch, tenants):
    """Counting the groups at the slowest group's switches only gives what counting at every
    switch gave, over limit (Quantum, two jobs) or not."""
    seen = []
    real = pipeline._sharp_trees

    def both(*args):
        got = real(*args)
        seen.append((got, _sharp_trees_counting_every_switch(*args)))
        return got

    monkeypatch.setattr(pipeline, "_sharp_trees", both)
    d = rail_optimized(servers=8, switch=switch, storage="none", catalog=CAT)
    pipeline.run(d, CAT, workload="gpt3-175b", tp=8, pp=1, global_batch=8 // tenants * tenants,
                 optimizer_sharded=False, scenario={"tenants": tenants})
    assert seen and all(a == b for a, b in seen)
    assert any("sharp_switch" in a for a, _ in seen) == (switch == "qm8700" and tenants == 2)


def test_components_by_kind_in_order_and_an_unknown_model_is_named():
    from designer.engine.placement import check_models, components_by_kind
    d = rail_optimized(servers=2, catalog=CAT)
    topo = d.topology
    kinds = components_by_kind(topo)
    assert list(kinds) == list(dict.fromkeys(c.kind for c in topo.components.values()))
    for kind, comps in kinds.items():
        assert comps == [c for c in topo.components.values() if c.kind == kind]
    nic = next(c for c in topo.components.values() if c.kind == "nic")
    topo.update_component(nic.id, model="connectx-99")
    with pytest.raises(UsageError, match=f"'{nic.id}'.*connectx-99"):
        check_models(topo, CAT, components_by_kind(topo))


@pytest.mark.parametrize("where", ["rail", "dpu", "loose"])
def test_servers_of_names_an_adapter_whose_model_is_not_in_the_catalog(where):
    """The adapters' models are checked from the keys of the servers alike, and a loose adapter
    (on no server) from its own: either way the first unknown one is named."""
    from designer.topology.model import Component
    d = rail_optimized(servers=3, catalog=CAT)
    topo = d.topology
    servers = servers_of(d, CAT)
    if where == "rail":
        bad = topo.components[servers[1].rails[3]]
    elif where == "dpu":
        bad = next(c for c in topo.components.values() if c.kind == "dpu" and c.parent == servers[2].id)
    else:
        bad = topo.add_component(Component("nic-loose", "nic", "connectx-7"))
    topo.update_component(bad.id, model="mystery-nic-9")
    with pytest.raises(UsageError, match=f"'{bad.id}'.*mystery-nic-9"):
        servers_of(d, CAT)
    with pytest.raises(UsageError, match=f"'{bad.id}'"):
        pipeline.run(d, CAT, workload="gpt3-175b", tp=8, pp=1)


def test_mixed_gpu_models_and_the_smallest_nvlink_domain_are_found_over_all_servers():
    """The warnings read every server: one server with another GPU model warns; one server with
    an NVLink domain of 3 is the smallest, which tp 8 does not fit (a warning that names it)."""
    d = rail_optimized(servers=4, catalog=CAT)
    kw = dict(workload="gpt3-175b", tp=8, pp=1)
    warned = pipeline.run(d, CAT, **kw).warnings
    assert not any("different GPU models" in x for x in warned)
    assert not any("NVLink domain" in x for x in warned)
    servers = servers_of(d, CAT)
    d.topology.set_prop(servers[3].id, "gpu_model", "h200")
    assert any("different GPU models" in x for x in pipeline.run(d, CAT, **kw).warnings)
    d.topology.update_component(servers[3].id, props={})
    d.topology.set_prop(servers[2].id, "nvlink_domain", 3)
    warned = pipeline.run(d, CAT, **kw).warnings
    assert any(x.startswith("tp 8 does not divide the 3 GPUs of a server's NVLink domain") for x in warned)
