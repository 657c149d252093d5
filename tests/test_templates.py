"""Generators: published fabric sizes, racks, positions, option specs and the embedded example."""

from collections import Counter

import pytest

from designer.errors import UsageError
from designer.paths import resources_dir
from designer.topology import fileformat
from designer.topology.catalog import load_catalog
from designer.topology.templates import TEMPLATES, fat_tree, leaf_spine, rail_optimized
from designer.topology.validation import validate


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def tiers(design):
    return Counter(c.props["tier"] for c in design.topology.switches())


def test_fat_tree_k8_has_80_switches_and_128_hosts(catalog):
    # Al-Fares et al. 2008: 5k^2/4 switches (k=8: 80) and k^3/4 hosts (128)
    d = fat_tree(k=8, catalog=catalog)
    topo = d.topology
    assert tiers(d) == {"core": 16, "spine": 32, "leaf": 32}
    assert len(topo.servers()) == 128
    assert all(len(topo.attached(s.id)) == 1 for s in topo.servers())
    assert all(len(topo.links_of(sw.id)) == 8 for sw in topo.switches())  # every port of a k=8 switch
    assert validate(d, catalog) == []


def test_rail_optimized_256_servers(catalog):
    d = rail_optimized(servers=256, storage="none", catalog=catalog)
    topo = d.topology
    # 8 scalable units of 32, one leaf per rail per unit: 64 leaves; 64 x 32 uplinks / 64 ports: 32 spines
    assert tiers(d) == {"leaf": 64, "spine": 32}
    srv = topo.servers()[40]  # unit 2
    rails = topo.attached(srv.id)
    assert len(rails) == 8
    leaves = [topo.neighbors(nic.id)[0] for nic in rails]
    assert len(set(leaves)) == 8
    same_unit = topo.servers()[63]
    assert [topo.neighbors(n.id)[0] for n in topo.attached(same_unit.id)] == leaves
    assert validate(d, catalog) == []


def test_rail_optimized_beyond_two_tiers_gets_a_core_tier_per_rail(catalog):
    # 32-port switches, SUs of 16 (16 down, 16 up): 768 servers = 48 SUs, 48 leaves per rail, more
    # than one spine layer reaches (48 x 16 / 32 = 24 spines > 16 uplinks). Per rail: pods of 16
    # leaves, 3 pods x 16 spines = 48 spines; 16 core groups of ceil(3 x 16 / 32) = 2 cores.
    d = rail_optimized(servers=768, su_size=16, switch="generic-leaf", storage="none", catalog=catalog)
    assert tiers(d) == {"leaf": 8 * 48, "spine": 8 * 48, "core": 8 * 32}
    topo = d.topology
    first, last = topo.servers()[0], topo.servers()[-1]
    a, b = topo.attached(first.id)[3], topo.attached(last.id)[3]  # rail 3 of different pods
    path = topo.shortest_path(a.id, b.id)
    assert [topo.components[c].props.get("tier") for c in path[1:-1]] == \
        ["leaf", "spine", "core", "spine", "leaf"]
    # no switch has more cables than ports
    for sw in topo.switches():
        assert sum(l.lanes for l in topo.links_of(sw.id)) <= 32


def test_rail_optimized_with_dpus_and_separate_storage(catalog):
    d = rail_optimized(servers=64, dpu="bluefield-3", catalog=catalog)
    topo = d.topology
    kinds = Counter(c.kind for c in topo.components.values())
    # 8 rail DPUs + 2 storage DPUs (dgx-h100 catalog dpu_count) per server; 2 appliances (1 per 32)
    assert kinds["dpu"] == 64 * 10 and kinds["nic"] == 0 and kinds["storage"] == 2
    # 10.2 kW + 8 x (150 - 25) W = 11.2 kW a server: 3 fit under the rack's 40.8 kW
    racks = [r for r in topo.racks() if any(m.kind == "gpu_server" for m in topo.members(r.id))]
    assert [len(topo.members(r.id)) for r in racks] == [3] * 21 + [1]
    assert validate(d, catalog) == []


def test_leaf_spine_oversubscription(catalog):
    d = leaf_spine(servers=12, oversubscription=3.0, storage="converged", storage_count=1, catalog=catalog)
    topo = d.topology
    # 64-port leaf at 3:1 -> 48 down, 16 up; 96 NICs + 8 storage ports = 104 -> 3 leaves, ceil(48/64) = 1 spine
    assert tiers(d) == {"leaf": 3, "spine": 1}
    leaf = topo.switches("leaf")[0]
    up = sum(l.lanes for l in topo.links_of(leaf.id) if topo.get(l.other(leaf.id)).kind == "switch")
    assert up == 16
    assert validate(d, catalog) == []


def test_big_storage_fabric_gets_a_core_tier(catalog):
    # 32-port leaves, 16 down/16 up. Compute: 128 NICs -> 8 leaves, 4 spines. Storage: 32 DPUs +
    # 80 x 8 appliance ports = 672 -> 42 leaves; ceil(42 x 16 / 32) = 21 spines > 16 uplinks, so pods
    # of 16 leaves (3 pods x 16 spines) and 16 core groups of ceil((16 + 16 + 10) / 32) = 2.
    d = leaf_spine(servers=16, switch="generic-leaf", storage="separate", storage_count=80, catalog=catalog)
    assert tiers(d) == {"leaf": 50, "spine": 4 + 48, "core": 32}
    assert validate(d, catalog) == []


def test_bad_options_are_usage_errors(catalog):
    with pytest.raises(UsageError, match="--k must be an even"):
        fat_tree(k=7, catalog=catalog)
    with pytest.raises(UsageError, match="no server model 'dgx-h999'"):
        leaf_spine(server="dgx-h999", catalog=catalog)
    with pytest.raises(UsageError, match="--oversubscription"):
        leaf_spine(oversubscription=0.5, catalog=catalog)
    # 32-port switches: pods of 16 leaves, at most 32 pods = 512 leaves of 16 hosts = 8,192 NICs;
    # 1,100 x 8 = 8,800 NICs need 550 leaves
    with pytest.raises(UsageError, match="too many for three switch tiers"):
        leaf_spine(servers=1100, switch="generic-leaf", storage="none", catalog=catalog)
    with pytest.raises(UsageError, match="--storage must be one of"):
        rail_optimized(servers=8, storage="cloud", catalog=catalog)


def test_option_specs_cover_the_generators():
    import inspect

    for template in TEMPLATES.values():
        params = inspect.signature(template.build).parameters
        for opt in template.options:
            if opt.fill:  # a new design gets the option's default; a design built in code keeps none
                assert params[opt.name].default == "none" != opt.default, (template.name, opt.name)
                continue
            assert params[opt.name].default == opt.default, (template.name, opt.name)
        assert set(params) - {o.name for o in template.options} == {"catalog"}


def test_example_design_is_what_its_template_makes(catalog):
    example = fileformat.load(resources_dir() / "examples" / "example.json")
    assert validate(example, catalog) == []
    again = TEMPLATES[example.meta["template"]](catalog=catalog, **example.meta["options"])
    assert again.topology == example.topology
    assert example.workload["preset"] == "llama3-8b" and example.scenario["encryption"] is True


def test_designs_record_their_template_and_dpu_designs_start_offloaded(catalog):
    d = TEMPLATES["leaf-spine"](servers=4, dpu="bluefield-3", catalog=catalog)
    assert d.meta["template"] == "leaf-spine" and d.meta["options"] == {"servers": 4, "dpu": "bluefield-3"}
    assert d.scenario["offload"] == "dpu"
    assert TEMPLATES["leaf-spine"](servers=4, catalog=catalog).scenario["offload"] == "host"


@pytest.mark.parametrize("options, message", [
    ({"servers": 10**8}, "more than a design file takes"),
    ({"gpus_per_server": 100}, "--gpus-per-server 100: must be at most 72"),
    ({"oversubscription": float("inf")}, "must be a finite number"),
])
def test_impossible_sizes_are_refused_before_building(catalog, options, message):
    with pytest.raises(UsageError, match=message):
        TEMPLATES["leaf-spine"](catalog=catalog, **options)
    with pytest.raises(UsageError, match="a smaller --k"):
        TEMPLATES["fat-tree"](k=200, catalog=catalog)


@pytest.mark.parametrize("switch,ratio", [("sn5600", 1.0), ("sn5600", 2.0), ("qm9700", 3.0)])
def test_oversubscription_is_a_bandwidth_ratio(catalog, switch, ratio):
    # DGX H100 NICs run at 400 Gb/s; the SN5600's ports at 800 Gb/s. A full leaf's host
    # bandwidth over its uplink bandwidth must not exceed the ratio asked for, and come close
    # to it (within one port's share), whatever the two speeds are.
    d = leaf_spine(servers=64, switch=switch, oversubscription=ratio, storage="none", catalog=catalog)
    topo = d.topology
    for leaf in topo.switches("leaf"):
        down = up = 0.0
        for link in topo.links_of(leaf.id):
            other = topo.get(link.other(leaf.id))
            bw = link.capacity_Gbps
            if other.kind == "switch":
                up += bw
            else:
                down += bw
        ports = int(catalog.get("switch", switch)["ports"])
        used = sum(l.lanes for l in topo.links_of(leaf.id))
        assert down / up <= ratio + 1e-9
        if used == ports:  # a full leaf: one more host port would break the ratio
            assert (down + 400.0) / (up - catalog.get("switch", switch)["port_speed_Gbps"]) > ratio


@pytest.mark.parametrize("switch", ["qm9700", "sn5600"])
@pytest.mark.parametrize("su_size", [16, 32, 40])
@pytest.mark.parametrize("storage", ["converged", "separate"])
def test_rail_designs_pass_every_design_rule(catalog, switch, su_size, storage):
    # found by hand: converged storage leaves took the host ports their own ratio allows plus the
    # rail leaves' uplinks, 66 cables on a 64-port switch
    d = rail_optimized(servers=96, su_size=su_size, switch=switch, dpu="bluefield-3", storage=storage,
                       catalog=catalog)
    errors = [p for p in validate(d, catalog) if p.severity == "error"]
    assert errors == []


def test_leaf_spine_beyond_one_spine_layer_gets_a_core_tier(catalog):
    # 600 x 8 = 4,800 NICs on 64-port leaves of 32 hosts + 32 uplinks: 150 leaves, more than one
    # spine layer of 64-port switches reaches. Pods of 32 leaves (5 pods: 4 x 32 + 22), 32 spines
    # each (one cable per leaf) = 160 spines; core group i takes spine i of every pod:
    # 32 + 32 + 32 + 32 + 22 = 150 cables / 64 ports = 3 cores a group, 32 groups = 96 cores.
    d = leaf_spine(servers=600, storage="none", catalog=catalog)
    assert tiers(d) == {"leaf": 150, "spine": 160, "core": 96}
    topo = d.topology
    for sw in topo.switches():
        assert sum(l.lanes for l in topo.links_of(sw.id)) <= 64
    first, last = topo.attached(topo.servers()[0].id)[0], topo.attached(topo.servers()[-1].id)[0]
    path = topo.shortest_path(first.id, last.id)
    assert [topo.components[c].props["tier"] for c in path[1:-1]] == ["leaf", "spine", "core", "spine", "leaf"]
    assert [p for p in validate(d, catalog) if p.severity == "error"] == []
