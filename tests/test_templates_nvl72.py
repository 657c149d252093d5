"""NVL72 rack templates (rail-optimized scale-out over 72-GPU NVLink domains) and the front-end
(north-south) Ethernet network of every template: switch/link/port counts derived from the
published building blocks, 0 design errors for each variant, and the engine running on them."""

from collections import Counter

import pytest

from designer.cli import main
from designer.engine.pipeline import run
from designer.engine.placement import servers_of
from designer.errors import UsageError
from designer.topology.catalog import load_catalog
from designer.topology.templates import TEMPLATES, leaf_spine, nvl72, rail_optimized
from designer.topology.validation import validate


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def tiers(design, frontend=False):
    return Counter(c.props["tier"] for c in design.topology.switches()
                   if bool(c.props.get("frontend")) == frontend)


def errors(design, catalog):
    return [p for p in validate(design, catalog) if p.severity == "error"]


# -- NVL72 scale-out ---------------------------------------------------------------------------
def test_gb200_nvl72_scalable_unit(catalog):
    # DGX SuperPOD GB200 RA: a scalable unit of 8 racks = 576 GPUs, one 400G ConnectX-7 per GPU
    # (DGX GB200 user guide: 4 per compute tray x 18 trays). 64-port 400G leaves, non-blocking:
    # 32 host ports = 4 rails x 8 racks, so 72 / 4 = 18 leaves, each with 32 uplinks:
    # 18 x 32 / 64 = 9 spines.
    d = nvl72(servers=8, storage="none", catalog=catalog)
    topo = d.topology
    assert tiers(d) == {"leaf": 18, "spine": 9}
    assert {s.model for s in topo.switches()} == {"qm9700"}
    assert len(topo.servers()) == 8
    assert sum(catalog.resolve(s)["gpu_count"] for s in topo.servers()) == 576
    # one system per rack of the NVL72 rack model
    racks = [r for r in topo.racks() if any(m.kind == "gpu_server" for m in topo.members(r.id))]
    assert len(racks) == 8 and {r.model for r in racks} == {"rack-nvl72"}
    assert all(len(topo.members(r.id)) == 1 for r in racks)
    # rail alignment: NIC r of every system is on the same leaf, and leaf j holds rails 4j..4j+3
    nics = [topo.attached(s.id) for s in topo.servers()]
    assert all(len(n) == 72 for n in nics)
    leaf_of = [[topo.neighbors(n.id)[0] for n in per] for per in nics]
    assert all(row == leaf_of[0] for row in leaf_of)
    assert [len(set(leaf_of[0][4 * j:4 * j + 4])) for j in range(18)] == [1] * 18
    assert len(set(leaf_of[0])) == 18
    # 576 host cables + 576 leaf-spine cables, no switch over its ports
    lanes = Counter()
    for link in topo.links.values():
        kinds = {topo.components[link.a].kind, topo.components[link.b].kind}
        lanes["host" if "nic" in kinds else "fabric"] += link.lanes
    assert lanes == {"host": 576, "fabric": 576}
    for sw in topo.switches():
        assert sum(l.lanes for l in topo.links_of(sw.id)) <= 64
    assert errors(d, catalog) == []


def test_gb300_nvl72_picks_quantum_x800(catalog):
    # GB300 NVL72: 72 ConnectX-8 at 800 Gb/s (NVL72 enterprise RA); Quantum-X800 Q3400, 144 ports of
    # 800G: 72 host ports = 9 rails x 8 racks, 72 / 9 = 8 leaves of 72 uplinks: 8 x 72 / 144 = 4 spines
    d = nvl72(servers=8, server="gb300-nvl72", storage="none", catalog=catalog)
    assert tiers(d) == {"leaf": 8, "spine": 4}
    assert {s.model for s in d.topology.switches()} == {"q3400"}
    assert {l.speed_Gbps for l in d.topology.links.values()} == {800}
    assert errors(d, catalog) == []


@pytest.mark.parametrize("server", ["gb200-nvl72", "gb300-nvl72"])
@pytest.mark.parametrize("storage", ["separate", "converged", "none"])
@pytest.mark.parametrize("frontend", ["none", "ethernet"])
def test_every_nvl72_variant_passes_the_design_rules(catalog, server, storage, frontend):
    d = TEMPLATES["nvl72"](servers=4, server=server, storage=storage, frontend=frontend, catalog=catalog)
    assert errors(d, catalog) == []
    assert d.meta["template"] == "nvl72" and d.meta["options"]["server"] == server


def test_nvl72_beyond_one_spine_layer(catalog):
    # 40 GB200 racks = 5 SUs x 18 leaves = 90 leaves > 64 ports: one switch plane per rail group
    # (18 planes of 5 leaves x 32 uplinks = 160 cables: 3 spines each = 54 spines)
    d = nvl72(servers=40, storage="none", catalog=catalog)
    assert tiers(d) == {"leaf": 90, "spine": 54}
    assert errors(d, catalog) == []


def test_nvl72_options_are_checked(catalog):
    with pytest.raises(UsageError, match="--rails-per-leaf 9 x --su-size 8 = 72"):
        nvl72(servers=8, rails_per_leaf=9, catalog=catalog)  # 72 host ports on a 64-port leaf
    with pytest.raises(UsageError, match="no nic model 'connectx-99'"):
        nvl72(nic="connectx-99", catalog=catalog)
    with pytest.raises(UsageError, match="--frontend must be one of"):
        nvl72(servers=2, frontend="wifi", catalog=catalog)


def test_rails_per_leaf_groups_rails_of_eight_gpu_servers(catalog):
    # 16 DGX H100 in SUs of 4: 4 rails x 4 servers = 16 host ports a leaf (2 leaves an SU, 8 in
    # all) instead of 8 leaves of 4; 16 uplinks each: 8 x 16 / 64 = 2 spines
    d = rail_optimized(servers=16, su_size=4, rails_per_leaf=4, storage="none", catalog=catalog)
    assert tiers(d) == {"leaf": 8, "spine": 2}
    assert rail_optimized(servers=16, su_size=4, storage="none", catalog=catalog).topology.switches(
        "leaf").__len__() == 32  # the default keeps one leaf per rail per SU
    assert errors(d, catalog) == []


def test_new_writes_an_nvl72_design(tmp_path, capsys):
    out = tmp_path / "nvl72.json"
    assert main(["new", "--template", "nvl72", "--servers", "8", "--server", "gb300-nvl72",
                 "--storage", "none", "-o", str(out)]) == 0
    assert "8 servers, 12 switches, " in capsys.readouterr().out
    assert main(["new", "--template", "nvl72", "--servers", "2", "--servers-per-rack", "2",
                 "-o", str(out)]) == 2
    assert "takes no --servers-per-rack" in capsys.readouterr().err


# -- engine on NVL72 ---------------------------------------------------------------------------
def test_tensor_parallel_24_stays_on_nvlink_in_an_nvl72(catalog):
    """GPT-3 175B (96 heads) with tp 24: inside one 72-GPU NVLink domain on an NVL72, across
    servers on 8-GPU HGX B300 (same Blackwell Ultra generation), which the engine warns about."""
    d = nvl72(servers=4, server="gb300-nvl72", storage="none", catalog=catalog)
    r = run(d, catalog, workload="gpt3-175b", tp=24, pp=4, dp=3, global_batch=1536).to_json()
    assert r["placement"]["tp_inside_nvlink_domain"] is True
    tp = next(c for c in r["collectives"] if c["name"] == "tp_allreduce")
    assert tp["servers"] == 1 and tp["ranks"] == 24
    assert not any("NVLink domain" in w for w in r["warnings"])
    hgx = rail_optimized(servers=36, server="hgx-b300", storage="none", catalog=catalog)
    r8 = run(hgx, catalog, workload="gpt3-175b", tp=24, pp=4, dp=3, global_batch=1536).to_json()
    assert r8["placement"]["tp_inside_nvlink_domain"] is False
    assert any("group of 24 GPUs spans 3 servers" in w for w in r8["warnings"])
    # same GPUs count, same model: the NVLink-domain TP all-reduce is the faster one
    tp8 = next(c for c in r8["collectives"] if c["name"] == "tp_allreduce")
    assert tp["time_s"] < tp8["time_s"]


# -- front-end network -------------------------------------------------------------------------
def _frontend_links(topo):
    return [l for l in topo.links.values()
            if any(topo.components[e].kind == "switch" and topo.components[e].props.get("frontend")
                   for e in (l.a, l.b))]


def test_frontend_on_the_storage_dpus_second_port(catalog):
    # DGX H100 with 2 BlueField-3 (dual-port, 400G): port 1 on the storage fabric, port 2 on the
    # front-end. 64 servers x 2 = 128 front-end ports on 64-port 400GbE SN5400 leaves, non-blocking:
    # 32 hosts + 32 uplinks a leaf, 4 leaves, 4 x 32 / 64 = 2 spines
    d = rail_optimized(servers=64, frontend="ethernet", catalog=catalog)
    topo = d.topology
    assert tiers(d, frontend=True) == {"leaf": 4, "spine": 2}
    assert {s.model for s in topo.switches() if s.props.get("frontend")} == {"sn5400"}
    fe = _frontend_links(topo)
    hosts = [l for l in fe if topo.components[l.a].kind != "switch" or topo.components[l.b].kind != "switch"]
    assert len(hosts) == 128 and all(l.medium == "ethernet" and l.speed_Gbps == 400 for l in hosts)
    # kept apart: front-end switches link only to front-end switches and to north-south DPUs,
    # and those DPUs use both their ports (storage + front-end), never a compute NIC
    for link in fe:
        ends = [topo.components[e] for e in (link.a, link.b)]
        for c in ends:
            assert c.kind in ("switch", "dpu")
            assert c.kind != "switch" or c.props.get("frontend")
    dpus = {e for l in hosts for e in (l.a, l.b) if topo.components[e].kind == "dpu"}
    assert all(len(topo.links_of(x)) == 2 for x in dpus)
    assert errors(d, catalog) == []


def test_frontend_without_dpus_uses_the_server_itself(catalog):
    # DGX A100 has no DPU (dpu_count 0): its on-board port; 16 servers on one SN5400 leaf
    d = leaf_spine(servers=16, server="dgx-a100", storage="none", frontend="ethernet", catalog=catalog)
    topo = d.topology
    assert tiers(d, frontend=True) == {"leaf": 1}
    ends = {e for l in _frontend_links(topo) for e in (l.a, l.b)}
    assert {topo.components[e].kind for e in ends} == {"switch", "gpu_server"}
    assert errors(d, catalog) == []


@pytest.mark.parametrize("template,options", [
    ("leaf-spine", {"servers": 8}), ("fat-tree", {"k": 4}), ("rail-optimized", {"servers": 40, "su_size": 8}),
    ("nvl72", {"servers": 3})])
@pytest.mark.parametrize("storage", ["separate", "none"])
def test_every_template_takes_a_frontend(catalog, template, options, storage):
    d = TEMPLATES[template](frontend="ethernet", storage=storage, catalog=catalog, **options)
    assert tiers(d, frontend=True)["leaf"] >= 1
    assert errors(d, catalog) == []


def test_frontend_must_be_ethernet(catalog):
    with pytest.raises(UsageError, match="a front-end network is Ethernet"):
        leaf_spine(servers=4, frontend="ethernet", frontend_switch="qm9700", catalog=catalog)


def test_frontend_dpus_carry_no_training_traffic_with_separate_storage(catalog):
    d = rail_optimized(servers=8, su_size=8, frontend="ethernet", catalog=catalog)
    info = servers_of(d, catalog)[0]
    assert [d.topology.components[e].kind for e in info.rails] == ["nic"] * 8


def test_frontend_dpus_carry_no_training_traffic_without_storage(catalog):
    # storage none: the north-south DPUs sit only on the front-end network; they must not be rails
    # (today rail floor(i*10/8) sends GPU 7's traffic through a front-end DPU)
    d = rail_optimized(servers=8, su_size=8, storage="none", frontend="ethernet", catalog=catalog)
    info = servers_of(d, catalog)[0]
    assert [d.topology.components[e].kind for e in info.rails] == ["nic"] * 8


def test_each_template_suggests_a_workload_that_runs_on_its_designs(catalog):
    """What `new` / "New from template" should fit (issue #12: a runnable default workload): the
    NVL72 template suggests Llama 3 70B, fitted to the 576 GPUs with TP inside the NVLink domain; the others keep the default Llama 3 8B."""
    from designer.services.workloads import fitted_workload
    from designer.topology.design import Design
    from designer.topology.templates import suggested_workload

    d = TEMPLATES["nvl72"](servers=8, server="gb300-nvl72", storage="none", catalog=catalog)
    assert suggested_workload(d) == "llama3-70b"
    assert suggested_workload(TEMPLATES["fat-tree"](k=4, catalog=catalog)) == "llama3-8b"
    assert suggested_workload(Design()) == "llama3-8b"
    d.workload = fitted_workload(suggested_workload(d), d, catalog)
    r = run(d, catalog).to_json()
    # the published batch 1,024 kept (issue #24): tp 8 x pp 9 x dp 8 fills the 576 GPUs (pp 4
    # would leave 64 idle: dp 18 does not divide 1,024)
    assert r["workload"]["tp"] == 8 and r["workload"]["pp"] == 9 and r["gpus"] == 576
    assert r["placement"]["tp_inside_nvlink_domain"] is True
    assert r["iteration_time_s"] > 0 and r["breakdown_s"]["compute"] > 0


def test_nvl72_storage_fabric_is_spectrum4_ethernet(catalog):
    # DGX SuperPOD GB200 RA: compute on InfiniBand, storage on Spectrum-4 800G Ethernet. 8 GB200
    # racks x 36 BlueField-3 (400G) + 1 appliance x 8 ports = 296 storage ports; on 64-port 800G
    # leaves a 400G host port weighs half an uplink: floor(800 x 64 / (400 + 800)) = 42 host ports,
    # 22 uplinks: ceil(296 / 42) = 8 leaves, ceil(8 x 22 / 64) = 3 spines
    d = nvl72(servers=8, catalog=catalog)
    storage = [s for s in d.topology.switches() if s.model == "sn5600"]
    assert Counter(s.props["tier"] for s in storage) == {"leaf": 8, "spine": 3}
    assert tiers(d) == {"leaf": 18 + 8, "spine": 9 + 3}
    for sw in storage:  # no compute NIC on the storage fabric
        assert all(d.topology.components[n].kind in ("switch", "dpu", "storage")
                   for n in d.topology.neighbors(sw.id))
    # the other templates keep one switch model unless told
    r = rail_optimized(servers=32, storage_switch="sn5600", catalog=catalog)
    assert {s.model for s in r.topology.switches()} == {"qm9700", "sn5600"}
    assert {s.model for s in rail_optimized(servers=32, catalog=catalog).topology.switches()} == {"qm9700"}
    assert errors(d, catalog) == [] and errors(r, catalog) == []
