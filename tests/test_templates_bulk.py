"""The bulk template builder (components and links collected in lists, one ``Topology.from_items``)
makes the designs its rules describe: counts per kind, model and tier, every cable between tiers
with its lanes, ids in the order made, rack slots and canvas positions inside racks.

Every expected figure below is worked out here from the rules in ``templates``' module docstring
and the catalog figures (ports, port speeds, U, power), not taken from a run of the builder."""

import math
from collections import Counter

import pytest

from designer.topology.catalog import load_catalog
from designer.topology.layout import RACK_HEADER, RACK_PAD, U_PX
from designer.topology.templates import TEMPLATES


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def role(comp):
    """What a component is in a fabric: a switch by tier (front-end ones apart), else its kind."""
    if comp.kind == "switch":
        return ("front-" if comp.props.get("frontend") else "") + comp.props["tier"]
    return comp.kind


def cabling(topo):
    """{(role, role): (links, lanes)} over all links, the lower tier first."""
    order = ["gpu_server", "nic", "dpu", "storage", "leaf", "spine", "core", "front-leaf", "front-spine",
             "front-core"]
    out: Counter = Counter()
    lanes: Counter = Counter()
    for link in topo.links.values():
        pair = tuple(sorted((role(topo.components[link.a]), role(topo.components[link.b])), key=order.index))
        out[pair] += 1
        lanes[pair] += link.lanes
    return {pair: (out[pair], lanes[pair]) for pair in out}


def server_watts(catalog, server, adapters):
    fig = catalog.get("server", server)
    gpu = catalog.get("gpu", fig["gpu_model"])["tdp_W"]
    return fig["base_power_W"] + fig["gpu_count"] * gpu + sum(
        catalog.get(kind, model).get("power_W", 0) for kind, model in adapters)


def per_rack(catalog, server, units, watts, limit):
    rack = catalog.get("rack", "rack-42u")
    return min(limit, rack["rack_units"] // units, int(rack["power_budget_kW"] * 1000 // watts))


def check_rack_positions(topo, catalog):
    """Servers sit at their U slot inside their rack (``layout`` module doc: a rack is drawn
    ``RACK_HEADER + U * U_PX + RACK_PAD`` high, U 1 at the bottom); NICs/DPUs at their server."""
    for s in topo.servers():
        rack = topo.components[s.parent]
        height = catalog.get("rack", rack.model)["rack_units"]
        units = catalog.get("server", s.model)["rack_units_used"]
        frame = RACK_HEADER + height * U_PX + RACK_PAD
        top_u = s.slot + units - 1  # the highest U the server takes
        y = rack.pos[1] - frame / 2 + RACK_HEADER + (height - top_u) * U_PX + units * U_PX / 2
        assert s.pos == pytest.approx((rack.pos[0], y), abs=1e-9)
        for dev in topo.attached(s.id):
            assert dev.pos == s.pos


@pytest.mark.parametrize("servers, dpu, limit", [(64, "", 4), (96, "bluefield-3", 2)])
def test_rail_optimized_two_tiers_with_separate_storage(catalog, servers, dpu, limit):
    d = TEMPLATES["rail-optimized"](servers=servers, dpu=dpu, servers_per_rack=limit, catalog=catalog)
    topo = d.topology
    fig = catalog.get("server", "dgx-h100")
    rails, ns = fig["nic_count"], fig["dpu_count"]  # 8 compute rails, 2 north-south BlueField-3
    rail_kind, rail_model = ("dpu", dpu) if dpu else ("nic", fig["nic_model"])
    ports = catalog.get("switch", "qm9700")["ports"]  # 64
    su, sus = 32, math.ceil(servers / 32)
    # rail leaves: 32 hosts at 400 Gb/s, as many uplinks at 400 Gb/s (non-blocking) to one spine layer
    leaves, up = sus * rails, min(ports - su, su)
    spines = math.ceil(leaves * up / ports)
    # storage: one appliance per 32 servers; its 8 ports and each server's 2 DPUs on 32-port leaves
    appliances = math.ceil(servers / 32)
    afa_ports = catalog.get("storage", "generic-nvmeof-afa")["ports"]
    ends = servers * ns + appliances * afa_ports
    s_leaves = math.ceil(ends / 32)
    s_spines = math.ceil(s_leaves * 32 / ports)
    kinds = Counter((c.kind, c.model) for c in topo.components.values() if c.kind != "rack")
    want = Counter({("gpu_server", "dgx-h100"): servers, (rail_kind, rail_model): servers * rails,
                    ("storage", "generic-nvmeof-afa"): appliances,
                    ("switch", "qm9700"): leaves + spines + s_leaves + s_spines})
    want[("dpu", "bluefield-3")] += servers * ns
    assert kinds == want
    assert Counter(c.props["tier"] for c in topo.switches()) == {"leaf": leaves + s_leaves,
                                                                 "spine": spines + s_spines}
    assert servers * ns % 32 == 0  # premise: the DPUs fill whole leaves, the appliances start one
    assert cabling(topo) == {
        (rail_kind, "leaf"): (servers * rails + (servers * ns if dpu else 0),
                              servers * rails + (servers * ns if dpu else 0)),
        # every leaf reaches every spine (spines <= uplinks): one bundle per pair
        ("leaf", "spine"): (leaves * spines + s_leaves * s_spines, leaves * up + s_leaves * 32),
        ("storage", "leaf"): (appliances, appliances * afa_ports),
        **({} if dpu else {("dpu", "leaf"): (servers * ns, servers * ns)}),
    }
    # NIC/DPU r of server s to the rail-r leaf of its SU: the compute leaves are the first
    # switches made, SU by SU and rail by rail, so that leaf is sw-(SU x rails + r + 1)
    for s, srv in enumerate(topo.servers()):
        assert srv.id == f"srv-{s + 1}"
        for r, dev in enumerate(topo.attached(srv.id)[:rails]):
            assert dev.slot == r and dev.kind == rail_kind
            assert topo.neighbors(dev.id) == [f"sw-{(s // su) * rails + r + 1}"]
    # a bundle's lanes follow uplink g -> spine g mod S: each spine gets L x u / S lanes
    for sp in topo.switches("spine")[:spines]:
        assert sum(l.lanes for l in topo.links_of(sp.id)) == leaves * up // spines
    # links run at the slower end's port speed, on the switch's medium
    for link in topo.links.values():
        a, b = topo.components[link.a], topo.components[link.b]
        speeds = [catalog.resolve(c)["port_speed_Gbps"] for c in (a, b) if c.kind != "gpu_server"]
        assert link.speed_Gbps == min(speeds)
        assert link.medium == catalog.resolve(b if b.kind == "switch" else a)["medium"]
    # racks: as many servers as U, power and servers_per_rack allow, U 1, 9, 17, ... in order
    adapters = [(rail_kind, rail_model)] * rails + [("dpu", "bluefield-3")] * ns
    n = per_rack(catalog, "dgx-h100", fig["rack_units_used"], server_watts(catalog, "dgx-h100", adapters), limit)
    assert n == limit  # the limit binds: power allows 4 DGX H100 (40.8 kW, just the budget), 3 with BF-3s
    for s, srv in enumerate(topo.servers()):
        assert srv.parent == f"rack-{s // n + 1}"
        assert srv.slot == 1 + (s % n) * fig["rack_units_used"]
    check_rack_positions(topo, catalog)
    # ids are numbered per prefix in the order made, and the counters say the highest
    counters = Counter(c.id.rsplit("-", 1)[0] for c in topo.components.values())
    counters["link"] = len(topo.links)
    assert topo.counters == dict(counters)
    for prefix, n_ids in counters.items():
        made = [x for x in (*topo.components, *topo.links) if x.rsplit("-", 1)[0] == prefix]
        assert made == [f"{prefix}-{i}" for i in range(1, n_ids + 1)]


def test_rail_optimized_rail_planes_with_a_core_tier_and_a_front_end(catalog):
    # 32-port Ethernet leaves, SUs of 8: 8 hosts and 8 uplinks a leaf; 512 servers = 64 SUs, 64
    # leaves a rail, more than one spine layer reaches (64 x 8 / 32 = 16 spines > 8 uplinks): per
    # rail, pods of 16 leaves with 8 spines each (4 pods), spine i of each pod to core group i of
    # ceil(4 x 16 / 32) = 2 cores. Storage none; front end: each server's 2 north-south DPUs on
    # non-blocking 64-port sn5400 leaves (32 down, 32 up), spines above.
    servers = 512
    d = TEMPLATES["rail-optimized"](servers=servers, su_size=8, switch="generic-leaf", storage="none",
                                   frontend="ethernet", catalog=catalog)
    topo = d.topology
    rails, ns = 8, 2
    per_rail = servers // 8
    pods = per_rail // 16
    f_leaves = math.ceil(servers * ns / 32)
    f_spines = math.ceil(f_leaves * 32 / 64)
    assert Counter(role(c) for c in topo.switches()) == {
        "leaf": rails * per_rail, "spine": rails * pods * 8, "core": rails * 8 * 2,
        "front-leaf": f_leaves, "front-spine": f_spines}
    assert cabling(topo) == {
        ("nic", "leaf"): (servers * rails, servers * rails),
        # each leaf's 8 uplinks go one to each of its pod's 8 spines
        ("leaf", "spine"): (rails * per_rail * 8, rails * per_rail * 8),
        # pod spine i takes its 16 leaves' cables up to core group i: 16 lanes over 2 cores
        ("spine", "core"): (rails * pods * 8 * 2, rails * pods * 8 * 16),
        ("dpu", "front-leaf"): (servers * ns, servers * ns),
        ("front-leaf", "front-spine"): (f_leaves * f_spines, f_leaves * 32),
    }
    # switches are numbered as made: the rail leaves SU by SU, then rail plane by rail plane its
    # pods' spines (8 a pod) and its 8 x 2 cores; the rail-r leaf of SU u goes up to the 8 spines
    # of its pod in plane r
    leaves, plane = rails * per_rail, pods * 8 + 16
    for u in range(0, per_rail, 7):
        for r in range(rails):
            leaf = f"sw-{u * rails + r + 1}"
            first = leaves + r * plane + (u // 16) * 8
            assert topo.neighbors(leaf)[-8:] == sorted(f"sw-{first + i + 1}" for i in range(8))
    for sw in topo.switches():
        medium = "ethernet"  # generic-leaf and sn5400 are both Ethernet switches
        assert all(l.medium == medium for l in topo.links_of(sw.id))
        assert sum(l.lanes for l in topo.links_of(sw.id)) <= catalog.resolve(sw)["ports"]
    check_rack_positions(topo, catalog)


def test_leaf_spine_converged_with_a_core_tier(catalog):
    # 700 servers x 8 NICs + 22 appliances x 8 ports = 5,776 ends on 32-port leaves (non-blocking:
    # d = u = 400 Gb/s for the NICs): 181 leaves, more than 64, so pods of 32 leaves with 32 spines
    # each (6 pods); spine i of each pod carries one cable per leaf of its pod up to core group i,
    # 181 cables in all: ceil(181 / 64) = 3 cores a group
    servers = 700
    d = TEMPLATES["leaf-spine"](servers=servers, storage="converged", catalog=catalog)
    topo = d.topology
    appliances = math.ceil(servers / 32)
    ends = servers * 8 + appliances * 8
    leaves = math.ceil(ends / 32)
    pods = math.ceil(leaves / 32)
    cores_per_group = math.ceil(leaves / 64)  # each group takes one cable per leaf
    assert Counter(role(c) for c in topo.switches()) == {"leaf": leaves, "spine": pods * 32,
                                                         "core": 32 * cores_per_group}
    cab = cabling(topo)
    assert cab[("nic", "leaf")] == (servers * 8, servers * 8)
    assert cab[("storage", "leaf")][1] == appliances * 8
    assert cab[("leaf", "spine")] == (leaves * 32, leaves * 32)
    assert cab[("spine", "core")][1] == leaves * 32
    check_rack_positions(topo, catalog)


def test_fat_tree_with_storage_and_a_front_end_on_one_port_dpus(catalog, tmp_path):
    # a server model whose one north-south DPU has a single port (BlueField-4): the storage link
    # takes it, so the front end gets a sibling DPU of that model in the next slot
    (tmp_path / "server.toml").write_text(
        '[[entry]]\nid = "bf4-box"\nname = "test server"\nsource = "test"\ngpu_count = 8\n'
        'gpu_model = "h100-sxm"\nnic_count = 4\nnic_model = "connectx-7"\ndpu_count = 1\n'
        'dpu_model = "bluefield-4"\nrack_units_used = 8\nbase_power_W = 4000\n')
    cat = load_catalog([tmp_path])
    assert cat.get("dpu", "bluefield-4")["ports"] == 1
    k = 4
    d = TEMPLATES["fat-tree"](k=k, server="bf4-box", storage="separate", frontend="ethernet", catalog=cat)
    topo = d.topology
    hosts = k ** 3 // 4
    assert Counter(role(c) for c in topo.switches())["core"] == (k // 2) ** 2
    for s in topo.servers():
        devs = topo.attached(s.id)
        # the fat-tree's one NIC (slot 0), the north-south DPU (1), its front-end sibling (2)
        assert [(x.kind, x.model, x.slot) for x in devs] == [
            ("nic", "connectx-7", 0), ("dpu", "bluefield-4", 1), ("dpu", "bluefield-4", 2)]
        assert [role(topo.components[n]) for n in topo.neighbors(devs[1].id)] == ["leaf"]
        assert [role(topo.components[n]) for n in topo.neighbors(devs[2].id)] == ["front-leaf"]
    # Al-Fares: k/2 hosts per edge switch, every edge to each of its pod's k/2 aggregation switches
    cab = cabling(topo)
    assert cab[("nic", "leaf")] == (hosts, hosts)
    assert cab[("dpu", "front-leaf")] == (hosts, hosts)
    check_rack_positions(topo, cat)


def test_nvl72_rails_per_leaf(catalog):
    # GB200 NVL72: 72 ConnectX-7 per system, SUs of 8 racks, 64-port qm9700 leaves: 32 host ports
    # a leaf take 4 rails of the SU's 8 systems, 18 leaves an SU; one rack per system
    servers = 16
    d = TEMPLATES["nvl72"](servers=servers, storage="none", catalog=catalog)
    topo = d.topology
    sus = servers // 8
    assert Counter(role(c) for c in topo.switches())["leaf"] == sus * 18
    for s, srv in enumerate(topo.servers()):
        nics = topo.attached(srv.id)
        assert len(nics) == 72
        leaves = [topo.neighbors(n.id)[0] for n in nics]
        # rails 4j .. 4j+3 share leaf j of the SU: leaves are made SU by SU, group by group
        assert leaves == [f"sw-{(s // 8) * 18 + r // 4 + 1}" for r in range(72)]
        assert srv.slot == 1 and topo.components[srv.parent].model == "rack-nvl72"
    check_rack_positions(topo, catalog)
