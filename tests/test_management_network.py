"""Issue 25, the management plane: templates draw the out-of-band management network (server BMCs
and DPU OOB ports to management switches per rack, uplinked to a management aggregation), the
engine routes no training traffic over it, and validation counts its ports and warns of an
unwired BMC or OOB port."""

import json

import pytest

from designer.engine import pipeline
from designer.errors import UsageError
from designer.topology.catalog import load_catalog
from designer.topology.management import management_ids, traffic_links_of
from designer.topology.model import Link
from designer.topology.templates import TEMPLATES, leaf_spine, rail_optimized
from designer.topology.validation import validate

CAT = load_catalog()


def _mgmt(design):
    topo = design.topology
    ids = management_ids(topo)
    links = [l for l in topo.links.values() if l.a in ids or l.b in ids]
    return ids, links


def test_oob_cables_every_bmc_and_dpu_oob_port_to_a_management_switch_of_its_rack():
    d = leaf_spine(servers=16, management="oob")
    topo = d.topology
    ids, links = _mgmt(d)
    servers = topo.servers()
    dpus = [c for c in topo.components.values() if c.kind == "dpu"]
    assert dpus  # the DGX H100's two north-south BlueField-3 (storage)
    # one BMC cable per server (bmc_ports 1) and one OOB cable per BlueField-3 (oob_ports 1)
    to_access = [l for l in links if (l.a in ids) != (l.b in ids)]
    assert sorted(l.a for l in to_access) == sorted([s.id for s in servers] + [c.id for c in dpus])
    assert {l.speed_Gbps for l in to_access} == {1}
    # a rack of 4 servers x (1 BMC + 2 OOB) = 12 ports fits one 48-port SN2201: one per rack
    racks = {topo.components[s.id].parent for s in servers}
    access = {l.b for l in to_access}
    assert len(access) == len(racks) == 4
    for l in to_access:
        server = l.a if topo.components[l.a].kind == "gpu_server" else topo.components[l.a].parent
        mine = {x.b for x in to_access if x.a == server or topo.components[x.a].parent == server}
        assert mine == {l.b}  # a server and its DPUs on one management switch
    # uplinks at 100 Gb/s to one SN2700 aggregation, two per management switch
    agg = ids - access
    assert [topo.components[a].model for a in agg] == ["sn2700"]
    ups = [l for l in links if l.a in ids and l.b in ids]
    assert {l.speed_Gbps for l in ups} == {100} and sum(l.lanes for l in ups) == 2 * len(access)
    assert all(topo.components[s].props == {"tier": "leaf", "management": True} for s in access)
    assert validate(d) == []


def test_without_the_option_a_template_draws_no_management_network_and_nvl72_gets_none():
    assert management_ids(leaf_spine(servers=8).topology) == frozenset()
    # an NVL72 system manages its trays and DPUs on its own OOB switches (bmc_ports 0)
    assert management_ids(TEMPLATES["nvl72"](servers=2, management="oob").topology) == frozenset()


def test_new_designs_get_oob_by_default_and_the_option_is_refused_when_unknown():
    opt = next(o for o in TEMPLATES["leaf-spine"].options if o.name == "management")
    assert opt.default == "oob" and opt.fill
    with pytest.raises(UsageError, match="--management must be one of none, oob, oob\\+inband"):
        leaf_spine(servers=4, management="bmc")
    with pytest.raises(UsageError, match="--management-switch qm9700: a management network is Ethernet"):
        leaf_spine(servers=4, management="oob", management_switch="qm9700")


def test_inband_management_adds_the_front_end_network():
    d = leaf_spine(servers=8, management="oob+inband")
    front = [c for c in d.topology.switches() if c.props.get("frontend")]
    assert front and management_ids(d.topology)
    assert validate(d) == []


def test_a_management_switch_goes_into_its_compute_rack_when_height_and_power_allow():
    # four DGX H100 fill a 40.8 kW rack: the switches go to the network racks
    d = leaf_spine(servers=8, management="oob")
    topo = d.topology
    compute = {s.parent for s in topo.servers()}
    assert not any(topo.components[i].parent in compute for i in management_ids(topo))
    # two servers a rack leave power for it: it sits above them
    d = leaf_spine(servers=8, servers_per_rack=2, management="oob")
    topo = d.topology
    compute = {s.parent for s in topo.servers()}
    access = {i for i in management_ids(topo) if topo.components[i].model == "sn2201"}
    assert {topo.components[i].parent for i in access} == compute
    assert validate(d) == []


def _flat(value, path="", out=None):
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(v, f"{path}.{k}", out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _flat(v, f"{path}[{i}]", out)
    else:
        out[path] = value
    return out


def test_the_engine_routes_nothing_over_the_management_network_and_counts_its_power():
    kw = dict(servers=16, dpu="bluefield-3", su_size=8)
    plain, managed = rail_optimized(**kw), rail_optimized(management="oob", **kw)
    ra = pipeline.run(plain, CAT, workload="llama3-8b", tp=8, pp=1)
    rb = pipeline.run(managed, CAT, workload="llama3-8b", tp=8, pp=1)
    fa, fb = _flat(json.loads(json.dumps(ra.to_json()))), _flat(json.loads(json.dumps(rb.to_json())))
    differ = {k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k)}
    # timing, collectives, links and their utilization are the same; only power and energy differ
    assert differ and all("power_W" in k or "kWh" in k or "energy" in k or "run_cost" in k for k in differ)
    ids, _ = _mgmt(managed)
    watts = sum(float(CAT.get("switch", managed.topology.components[i].model)["power_W"]) for i in ids)
    assert rb.power_W["switches"] - ra.power_W["switches"] == pytest.approx(watts)
    assert not any(link.id in {l.id for l in _mgmt(managed)[1]} for link in rb.links)
    # a DPU rail's line rate leaves its 1 Gb/s OOB cable out
    dpu = next(c.id for c in managed.topology.components.values() if c.kind == "dpu")
    assert len(traffic_links_of(managed.topology, dpu)) == len(managed.topology.links_of(dpu)) - 1


def test_a_server_cut_off_the_fabric_is_isolated_even_on_the_management_network():
    d = leaf_spine(servers=4, storage="none", management="oob")
    topo = d.topology
    srv = topo.servers()[0]
    for link in list(topo.links.values()):
        if topo.components[link.a].parent == srv.id and link.b not in management_ids(topo):
            topo.remove_link(link.id)
    codes = {(p.code, p.component) for p in validate(d)}
    assert ("server-isolated", srv.id) in codes


def test_an_unwired_bmc_or_oob_port_is_a_warning_naming_the_port():
    d = leaf_spine(servers=4, storage="none", management="oob")
    topo = d.topology
    ids = management_ids(topo)
    srv = topo.servers()[0]
    bmc = next(l for l in topo.links.values() if l.a == srv.id and l.b in ids)
    topo.remove_link(bmc.id)
    problems = [p for p in validate(d) if p.code == "management-unwired"]
    assert [(p.severity, p.component) for p in problems] == [("warning", srv.id)]
    assert "1 of 1 BMC port not cabled to a management switch" in problems[0].message
    assert "--management oob" in problems[0].hint
    d = leaf_spine(servers=4, management="oob")
    topo = d.topology
    ids = management_ids(topo)
    dpu = next(c for c in topo.components.values() if c.kind == "dpu")
    topo.remove_link(next(l.id for l in topo.links.values() if l.a == dpu.id and l.b in ids))
    problems = [p for p in validate(d) if p.code == "management-unwired"]
    assert [p.component for p in problems] == [dpu.id] and "OOB management port" in problems[0].message
    # a design without a management network is not flooded with warnings
    assert not [p for p in validate(leaf_spine(servers=4)) if p.code == "management-unwired"]


def test_management_cables_take_oob_and_bmc_ports_and_too_many_are_an_error():
    d = leaf_spine(servers=4, management="oob")
    topo = d.topology
    ids = management_ids(topo)
    dpu = next(c for c in topo.components.values() if c.kind == "dpu")
    sw = next(l.b for l in topo.links.values() if l.a == dpu.id and l.b in ids)
    # the BlueField-3's two network ports are both cabled (storage, and the OOB one apart): clean
    assert not [p for p in validate(d) if p.code == "ports-exceeded"]
    topo.add_link(Link(topo.new_id("link"), dpu.id, sw, "ethernet", 1.0))
    problems = [p for p in validate(d) if p.code == "ports-exceeded"]
    assert [p.component for p in problems] == [dpu.id]
    assert "2 management cables on a DPU with 1 OOB management port (oob_ports)" in problems[0].message


def test_a_management_network_beyond_three_switch_tiers_grows_a_deeper_tree():
    """2,048 racks of management switches (8,192 servers, 4 a rack) are more pods (of a 32-port
    SN2700's 16 leaves) than a core of 32 ports takes: the management tree grows tiers (each
    aggregation switch 15 lower switches x 2 links, 2 up) instead of refusing the design, which the
    training fabric itself builds; every management switch reaches the one top switch."""
    import collections

    d = rail_optimized(servers=8192, management="oob")
    topo = d.topology
    ids = set(management_ids(topo))
    mlinks = [l for l in topo.links.values() if l.a in ids and l.b in ids]
    ports = int(CAT.get("switch", "sn2700")["ports"])
    used = collections.Counter()
    for l in mlinks:
        used[l.a] += l.lanes
        used[l.b] += l.lanes
    aggs = [i for i in ids if topo.components[i].model == "sn2700"]
    assert len(aggs) > 1 and all(used[a] <= ports for a in aggs)  # no switch over its ports
    # one connected tree: from any management switch, the switch-to-switch links reach all of them
    adj = collections.defaultdict(set)
    for l in mlinks:
        adj[l.a].add(l.b)
        adj[l.b].add(l.a)
    seen, todo = set(), [aggs[0]]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo += adj[n] - seen
    assert seen == ids
    assert validate(d) == []
