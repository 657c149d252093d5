"""The design rules worked out over arrays (``validation._View``) say what the rules say item by
item: on random designs of catalog models with overrides (ports, speeds, power, GPUs, an
unhashable value), stacked slots, dangling link ends and bundles of lanes, the ``ports-exceeded``,
``link-too-fast``, ``rack-*``, ``bad-parent``/``unattached`` and reachability problems equal the
ones written here straight from the rules in the module docstring, in the same order."""

import random

import networkx as nx
import pytest

from designer.topology.catalog import load_catalog
from designer.topology.kinds import KIND_LABEL
from designer.topology.model import ATTACHABLE, RACKABLE, Component, Link, Topology, parent_problem
from designer.topology.validation import PORTED, validate

MODELS = {"rack": ["rack-42u", "rack-nvl72"], "gpu_server": ["dgx-h100", "dgx-a100", "gb200-nvl72"],
          "nic": ["connectx-7", "connectx-6"], "dpu": ["bluefield-3", "bluefield-4"],
          "switch": ["qm9700", "sn5400"], "storage": ["generic-nvmeof-afa"]}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def random_design(seed: int, n: int = 120, dangling: bool = True) -> Topology:
    rng = random.Random(seed)
    ids = [f"c{i}" for i in range(n)]
    rng.shuffle(ids)  # design order is not id order
    racks = [i for i in ids[: n // 8]]
    servers = [i for i in ids[n // 8: n // 3]]
    comps = []
    for cid in ids:
        kind = ("rack" if cid in racks else "gpu_server" if cid in servers
                else rng.choice(("nic", "dpu", "switch", "storage")))
        props = {}
        if kind != "rack" and rng.random() < 0.15:
            props["ports"] = rng.choice([1, 2, 3])
        if kind != "rack" and rng.random() < 0.1:
            props["port_speed_Gbps"] = rng.choice([100, 200.0])
        if rng.random() < 0.1:
            props["power_W"] = rng.choice([100, 9000.5])
        if kind == "gpu_server" and rng.random() < 0.2:
            props["gpu_count"] = rng.choice([1, 4, 72])
        if rng.random() < 0.03:
            props["note"] = ["an", "unhashable", "override"]
        if kind in ATTACHABLE:
            parent = rng.choice(servers + [None, "missing"])
        elif kind in RACKABLE:
            parent = rng.choice(racks + [None])
        else:
            parent = None
        slot = rng.choice([None, 1, 1, 3, 9, 17, 40, 45, 0]) if parent else None  # ties and misfits
        comps.append(Component(cid, kind, rng.choice(MODELS[kind]), parent=parent, slot=slot, props=props))
    links = []
    for k in range(rng.randrange(n, 3 * n)):
        a, b = rng.sample(ids, 2)
        if dangling and rng.random() < 0.02:
            b = f"gone-{rng.randrange(3)}"  # a dangling end (a Topology built from unchecked items)
        links.append(Link(f"l{k}", a, b, speed_Gbps=rng.choice([100, 200, 400, 800.0]),
                          lanes=rng.choice([1, 1, 2, 8, 40])))
    return Topology.from_items(comps, links)


def ports_by_rule(t, cat):
    """Cables (lanes) per NIC/DPU/switch/storage above its ports, by first appearance as a link end."""
    used = {}
    for l in t.links.values():
        for end in (l.a, l.b):
            used[end] = used.get(end, 0) + l.lanes
    return [(cid, f"{n} cables on a {int(cat.resolve(t.components[cid])['ports'])}-port "
                  f"{KIND_LABEL[t.components[cid].kind]}")
            for cid, n in used.items() if cid in t.components and t.components[cid].kind in PORTED
            and n > int(cat.resolve(t.components[cid])["ports"])]


def speeds_by_rule(t, cat):
    out = []
    for l in t.links.values():
        for end in (l.a, l.b):
            c = t.components.get(end)
            if c is not None and c.kind in PORTED and l.speed_Gbps > float(cat.resolve(c)["port_speed_Gbps"]):
                out.append((end, l.id))
    return out


def power_by_rule(t, cat, c):
    """Nameplate draw: a server's base + GPUs x TDP + each attached NIC/DPU; else power_W."""
    fig = cat.resolve(c)
    if c.kind != "gpu_server":
        return float(fig.get("power_W", 0.0))
    gpu = float(cat.get("gpu", fig["gpu_model"])["tdp_W"])
    adapters = sum(float(cat.resolve(d).get("power_W", 0.0)) for d in t.attached(c.id))
    return sum([int(fig["gpu_count"]) * gpu, float(fig.get("base_power_W", 0.0)), adapters])


def racks_by_rule(t, cat):
    out = []
    for rack in t.racks():
        fig = cat.resolve(rack)
        members = t.members(rack.id)
        units = sum(int(cat.resolve(m)["rack_units_used"]) for m in members)
        if units > int(fig["rack_units"]):
            out.append(("rack-units", rack.id, f"members need {units}U; the rack has {int(fig['rack_units'])}U"))
        watts = sum(power_by_rule(t, cat, m) for m in members)
        if watts > float(fig["power_budget_kW"]) * 1000.0:
            out.append(("rack-power", rack.id, f"members draw up to {watts / 1000:.1f} kW; the budget is "
                        f"{float(fig['power_budget_kW']):.1f} kW"))
    return out


def parents_by_rule(t):
    out = []
    for c in t.components.values():
        parent = t.components.get(c.parent) if c.parent is not None else None
        if c.parent is not None and parent is None:
            out.append(("bad-parent", c.id))
        elif parent is not None and parent_problem(c.kind, parent.kind):
            out.append(("bad-parent", c.id))
        elif parent is None and c.kind in ATTACHABLE:
            out.append(("unattached", c.id))
    return out


def isolated_by_rule(t):
    """Servers outside the part (networkx over links and attachments) holding most servers."""
    g = t.graph()
    parts = list(nx.connected_components(g))  # numbered by their first node, in design order
    part = {node: i for i, p in enumerate(parts) for node in p}
    servers = [s.id for s in t.servers()]
    if len(servers) < 2:
        return []
    sizes = {}
    for s in servers:
        sizes[part[s]] = sizes.get(part[s], 0) + 1
    main = max(sizes, key=lambda k: (sizes[k], -k))
    return [s for s in servers if part[s] != main]


@pytest.mark.parametrize("seed", range(30))
def test_array_rules_say_what_the_item_rules_say(catalog, seed):
    t = random_design(seed)
    problems = validate(t, catalog)
    by = lambda code: [p for p in problems if p.code == code]  # noqa: E731
    assert [(p.component, p.message) for p in by("ports-exceeded")] == ports_by_rule(t, catalog)
    assert [(p.component, p.link) for p in by("link-too-fast")] == speeds_by_rule(t, catalog)
    assert [(p.code, p.component, p.message) for p in problems if p.code in ("rack-units", "rack-power")] == \
        racks_by_rule(t, catalog)
    assert [(p.code, p.component) for p in problems if p.code in ("bad-parent", "unattached")
            and not p.message.startswith("placement loops")] == parents_by_rule(t)


@pytest.mark.parametrize("seed", range(10))
def test_isolated_servers_are_those_outside_the_largest_part(seed):
    t = random_design(100 + seed, dangling=False)  # networkx wants every link end to be a node
    assert [p.component for p in validate(t) if p.code == "server-isolated"] == isolated_by_rule(t)


def test_a_server_draws_the_same_whatever_its_adapters_ids(catalog):
    # two servers with the same adapter models in the same slots, but ids that sort differently,
    # and a third with two adapters in one slot (their ids decide the order): each rack's sum is
    # the rule's, member by member
    t = Topology()
    for r in range(3):
        t.add_component(Component(f"rack-{r}", "rack", "rack-42u"))
        t.add_component(Component(f"s{r}", "gpu_server", "dgx-h100", parent=f"rack-{r}", slot=1,
                                  props={"gpu_count": 8}))
    for r, names in enumerate((["a", "b"], ["z", "y"], ["m", "n"])):
        for i, name in enumerate(names):
            t.add_component(Component(name, "dpu" if i else "nic", "bluefield-3" if i else "connectx-7",
                                      parent=f"s{r}", slot=0 if r == 2 else i, props={"power_W": 123456.7}))
    got = [(p.component, p.message) for p in validate(t, catalog) if p.code == "rack-power"]
    assert got == [(rack, msg) for code, rack, msg in racks_by_rule(t, catalog)]
    assert len(got) == 3
