"""Review findings on the fair DPU comparison (issue 13, H4b): each test would have caught one.

Reference figures come from the catalog sources they cite: BlueField-3 Arm kernel path 120 Gb/s
(assumed in models/hardware/dpu.toml, scaled from the BlueField-2 measurement), BlueField-2 50 Gb/s
(arXiv 2105.06619, upper bound), line rates from the datasheets, ConnectX-7 ~25 W, BlueField-3 up
to 150 W (controller user manual)."""

import pytest

from designer.engine import pipeline, resources
from designer.engine.dpu import DpuCapacity, DpuCosts
from designer.engine.resources import ResourceInputs, ServerGroup
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

CAT = load_catalog()
FIG = resources.cost_figures(CAT)


def storage_dpus(design):
    """The two storage/north-south DPUs of each server (attached after the eight rail adapters)."""
    topo = design.topology
    return [a.id for s in topo.servers() for a in topo.attached(s.id)[8:]]


def two_crossings_GBps(arm_tcp_Gbps, cores=16, GHz=2.0, dpus=2):
    """Read rate of ``dpus`` storage DPUs when each byte crosses their Arm kernel path twice (SNAP's
    NVMe/TCP initiator and the filesystem client) plus SNAP's per-IO cost (models/costs/dpu.toml
    snap_arm_cycles_per_io, per 128 KiB read-ahead IO)."""
    hz = cores * GHz * 1e9
    per_byte = 2 * hz / (arm_tcp_Gbps * 1e9 / 8) + FIG["snap_arm_cycles_per_io"] / FIG["read_io_bytes"]
    return dpus * hz / per_byte / 1e9


def vision_read(design, **scen):
    r = pipeline.run(design, CAT, workload="unet3d-kits19",
                     scenario={"offload": "dpu", "storage_transport": "tcp", "parallel_fs_client": True,
                               **scen})
    return r.resources["groups"][0]


# --- 1. per-model DPU figures reach the DPUs drawn in a design, each DPU uses its own -----------

def test_a_drawn_dpu_gets_its_catalog_arm_path_and_memory():
    for model, arm, dram in (("bluefield-2", 50, 25.6), ("bluefield-3", 120, 83.2)):
        e = CAT.get("dpu", model)
        assert (e["arm_tcp_Gbps"], e["dram_GBps"]) == (arm, dram)
        assert e["sources"]["arm_tcp_Gbps"] and e["sources"]["dram_GBps"]


def test_storage_dpus_read_at_their_own_arm_kernel_path_rate():
    # NVMe/TCP under SNAP + a filesystem client: each byte crosses the Arm kernel path twice, so
    # two storage DPUs give 2 x arm_tcp_Gbps / 8 / 2 GB/s per server
    design = rail_optimized(servers=4, storage_count=4)
    g = vision_read(design)
    assert g["read_limit"] == "DPU Arm cores"
    assert g["read_achieved_GBps"] == pytest.approx(two_crossings_GBps(120), rel=1e-6)
    for d in storage_dpus(design):  # BlueField-2 for storage: its own 50 Gb/s, not the rails'
        design.topology.update_component(d, model="bluefield-2")
    assert vision_read(design)["read_achieved_GBps"] == pytest.approx(two_crossings_GBps(50, 8, 2.5), rel=1e-6)


def test_rail_dpus_do_not_lend_their_arm_rate_to_storage_dpus():
    design = rail_optimized(servers=4, storage_count=4, dpu="bluefield-3")
    for d in storage_dpus(design):
        design.topology.update_component(d, model="bluefield-2")
    g = vision_read(design)
    assert g["read_limit"] == "DPU Arm cores"
    assert g["read_achieved_GBps"] == pytest.approx(two_crossings_GBps(50, 8, 2.5), rel=1e-6)


# --- 2. SmartNIC + encryption + GDS: inline crypto keeps the storage path on RDMA ---------------

def gds_group(scenario, **kw):
    cap = DpuCapacity.of(8, 400, 198, 0, 0.0)
    return ServerGroup(scenario=scenario, encrypt=True, gpudirect_storage=True, rdma_bytes=1e9,
                       comm_s=0.01, storage_fabric_GBps=50.0,
                       smartnic_capacity=cap if scenario == "smartnic" else None, **kw)


def test_smartnic_encryption_keeps_gpudirect_storage():
    inp = dict(iteration_s=1.0, samples_per_iteration=64, sample_bytes=1e8, storage_read_GBps=1000,
               storage_write_GBps=500)
    host = resources.assess(ResourceInputs(groups=(gds_group("host"),), **inp), FIG)
    nic = resources.assess(ResourceInputs(groups=(gds_group("smartnic"),), **inp), FIG)
    assert any("encryption" in w for w in host.warnings) and not host.groups[0].gpudirect_storage
    assert nic.groups[0].gpudirect_storage and not nic.warnings
    assert not any("DPU" in w for w in nic.warnings)


# --- 3. adapter power follows the mode; the DPU run keeps a drawn layout -------------------------

def test_power_prices_a_connectx_for_host_and_smartnic_and_the_dpus_for_dpu():
    design = rail_optimized(servers=2)  # 8 ConnectX-7 rails + 2 BlueField-3 per server (SuperPOD)
    w = dict(workload="llama3-8b", global_batch=16)
    watts = {m: pipeline.run(design, CAT, scenario={"offload": m, "nic_as_dpu": True}, **w).power_W["adapters"]
             for m in ("host", "smartnic", "dpu")}
    cx7, bf3 = CAT.get("nic", "connectx-7")["power_W"], CAT.get("dpu", "bluefield-3")["power_W"]
    cx7_typ = CAT.get("nic", "connectx-7")["typical_power_W"]
    # host and SmartNIC: every adapter a ConnectX-7, which has a typical figure, so the default
    # adapter_power=auto counts it; the DPU run has BlueField-3 without one, so maxima
    assert watts["host"] == watts["smartnic"] == pytest.approx(2 * 10 * cx7_typ)
    assert watts["dpu"] == pytest.approx(2 * (8 * cx7 + 2 * bf3))  # rails stay ConnectX
    mx = pipeline.run(design, CAT, scenario={"offload": "host", "nic_as_dpu": True, "adapter_power": "max"}, **w)
    assert mx.power_W["adapters"] == pytest.approx(2 * 10 * cx7)


# --- 5. the Arm path cannot beat the line rate ----------------------------------------------------

def test_arm_kernel_path_is_capped_at_the_line_rate():
    dc = DpuCosts.from_figures(FIG)
    bf3 = DpuCapacity.of(1, 400, 193, 16, 2.0, 120, 83.2)
    # 1500-byte frames: the catalog's 120 Gb/s; 9000-byte frames: 4 x 120 = 480 Gb/s on paper,
    # held to the 400 Gb/s line
    assert resources.arm_path_cycles_per_byte(bf3, 1500, dc) == pytest.approx(32e9 / (120e9 / 8))
    assert resources.arm_path_cycles_per_byte(bf3, 9000, dc) == pytest.approx(32e9 / (400e9 / 8))


# --- 3/5/9. what compare says about the layout, the assumptions and the modes ----------------------

@pytest.fixture(scope="module")
def tenants_cmp():
    from designer.engine.compare import compare

    sc = dict(tenants=4, encryption=True, isolation="overlay", k8s_agents=True, nccl_proxy=True)
    return compare(rail_optimized(servers=8), CAT, scenario=sc, workload="llama3-8b", global_batch=16)


def test_compare_says_which_layout_and_which_figures_are_assumed(tenants_cmp):
    notes = " ".join(tenants_cmp.notes)
    assert "keeps the drawn layout" in notes and "connectx-7 NICs stay on their rails" in notes
    assert "price each of the 16 bluefield-3 as a connectx-7" in notes
    # BlueField-3's 120 Gb/s Arm kernel path is an assumption (models/hardware/dpu.toml) and said so
    assert "bluefield-3 Arm kernel path 120 Gb/s" in notes and "ASSUMED" in notes


def test_compare_labels_engines_by_owner_and_moves_of_the_host_share(tenants_cmp):
    from designer.commands.compare import format_table

    text = format_table(tenants_cmp)
    assert "Crypto engine (inline encryption) load" in text and "DPU crypto engine load" not in text
    # the DPU run keeps ConnectX on the rails: their crypto engine is named as such
    assert any("rail SmartNIC (ConnectX) crypto engine" in b for b in tenants_cmp.runs["dpu"].bottlenecks)
    assert any(b.startswith("SmartNIC crypto engine") for b in tenants_cmp.runs["smartnic"].bottlenecks)
    # the DPU takes the agents off the host: the DPU-vs-SmartNIC differences say so
    assert any(r.startswith("host CPU infrastructure share") and "agents" in r
               for r in tenants_cmp.mode_reasons["dpu_vs_smartnic"])


def test_a_storage_stall_states_per_server_figures_per_server():
    design = rail_optimized(servers=4, storage_count=4)
    r = pipeline.run(design, CAT, workload="unet3d-kits19",
                     scenario={"offload": "dpu", "storage_transport": "tcp", "parallel_fs_client": True})
    stall = next(b for b in r.bottlenecks if b.startswith("data stall"))
    per_server = r.storage["read_demand_GBps"] / 4
    assert f"each server needs {per_server:.3g} GB/s" in stall


# --- 4/8. host memory term, proxies counted once, constant loads charged over their time ---------

def kernel_group(**kw):
    base = dict(scenario="host", gpus=8, cpu_cores=112, cpu_GHz=3.0, rdma=False, tcp_bytes=300e9,
                comm_s=1.0, kernel_copy_membw=True, host_memory_GBps=614.4)
    return ServerGroup(**{**base, **kw})


def test_the_host_memory_term_is_conservative_and_its_upper_bound_limits():
    inp = ResourceInputs(groups=(kernel_group(),), iteration_s=2.0)
    # 300 GB/s of kernel TCP (65 of 112 cores at 0.65 cycles/byte): one memory pass fits the
    # 614.4 GB/s of 2 x 8 DDR5-4800 channels; the upper bound of three passes (DDIO misses, Cai et
    # al. SIGCOMM 2021) needs 900 GB/s and stretches the collectives by 900 / 614.4
    assert FIG["kernel_copy_memory_passes"] == 1 and FIG["kernel_copy_memory_share"] == 1
    low = resources.assess(inp, FIG)
    assert low.groups[0].network_slowdown == 1.0
    high = resources.assess(inp, {**FIG, "kernel_copy_memory_passes": 3.0})
    assert high.groups[0].network_slowdown == pytest.approx(900 / 614.4, rel=1e-6)
    assert any("host memory bandwidth" in b for b in high.bottlenecks)


def test_nccl_proxy_threads_are_not_counted_on_top_of_the_socket_work_they_run():
    def proxy_share(**kw):
        r = resources.assess(ResourceInputs(groups=(kernel_group(nccl_proxy=True, **kw),), iteration_s=2.0), FIG)
        return r.host_cpu.by_task["nccl_proxy"], r.iteration_s
    # kernel TCP: 195e9 cycles of socket work exceed the 8 proxy cores' 24e9 over the 1 s window
    assert proxy_share()[0] == 0.0
    # RDMA: the 8 proxy threads poll for the whole 1 s window of the iteration (2 s + stragglers)
    share, iteration = proxy_share(rdma=True, tcp_bytes=0.0, rdma_bytes=300e9)
    assert share == pytest.approx(8 * 1.0 / (112 * iteration), rel=1e-6)


def test_agents_are_the_same_share_of_host_cycles_in_every_mode_that_keeps_them():
    def agents(scenario, **kw):
        g = kernel_group(scenario=scenario, k8s_agents=True, kernel_copy_membw=False, **kw)
        return resources.assess(ResourceInputs(groups=(g,), iteration_s=2.0), FIG).host_cpu.by_task["agents"]
    cap = DpuCapacity.of(8, 400, 198, 0, 0.0)
    # the host iteration is longer (kernel TCP) than the SmartNIC one; the agents' share is not
    assert agents("host", rdma=True, tcp_bytes=0.0, rdma_bytes=1e9, encrypt=True) == \
        pytest.approx(agents("smartnic", smartnic_capacity=cap, rdma=True, tcp_bytes=0.0, rdma_bytes=1e9,
                             encrypt=True), rel=1e-9) == pytest.approx(FIG["k8s_agent_cores"] / 112)


def test_an_arm_limited_read_says_its_rate_is_an_assumption_or_upper_bound():
    design = rail_optimized(servers=4, storage_count=4)
    r = pipeline.run(design, CAT, workload="unet3d-kits19",
                     scenario={"offload": "dpu", "storage_transport": "tcp", "parallel_fs_client": True})
    stall = next(b for b in r.bottlenecks if b.startswith("data stall"))
    assert "DPU Arm cores" in stall and "assumption" in stall and "upper bound" in stall


# --- 6. the typical detour length is an assumption: results over its plausible range ----------------

def with_detour_mean(monkeypatch, m):
    figures = {**FIG, "detour_mean_s": m}
    monkeypatch.setattr(resources, "cost_figures", lambda catalog=None: figures)


@pytest.mark.parametrize("sets", [{}, {"offload": "smartnic"}, {"tenants": 2, "k8s_agents": True, "nccl_proxy": True}])
def test_long_steps_do_not_depend_on_the_assumed_detour_length(monkeypatch, sets):
    from designer.paths import resources_dir
    from designer.topology.fileformat import load

    design = load(resources_dir() / "examples" / "example.json")
    out = {}
    for m in (10e-6, 30e-6, 100e-6):  # the range stated in jitter.toml (single-digit us .. 100 us)
        with_detour_mean(monkeypatch, m)
        r = pipeline.run(design, CAT, scenario=sets)
        out[m] = (r.iteration_time_s, r.training_time_days, r.energy_kwh, r.host_cpu["infra_fraction"])
    for m in (10e-6, 100e-6):
        for a, b in zip(out[m], out[30e-6]):
            assert a == pytest.approx(b, rel=0.02)


def test_a_short_step_offload_gain_is_its_straggler_part_and_grows_with_the_detour_length(monkeypatch):
    from designer.engine.compare import compare
    from designer.paths import resources_dir
    from designer.topology.fileformat import load

    design = load(resources_dir() / "examples" / "example.json")
    gains = []
    for m in (10e-6, 30e-6, 100e-6):
        with_detour_mean(monkeypatch, m)
        cmp = compare(design, CAT, workload="resnet50-imagenet")
        host, off = cmp.runs["host"], cmp.runs["dpu"]
        delta = off.iteration_time_s - host.iteration_time_s
        assert delta == pytest.approx(off.breakdown_s["straggler"] - host.breakdown_s["straggler"], abs=1e-12)
        gains.append(-delta / host.iteration_time_s)
    # a worker of a few-ms step loses whole detours: longer detours, more to gain (documented)
    assert 0 < gains[0] < gains[1] < gains[2] < 0.05


# --- host CPUs of the 2025-26 systems --------------------------------------------------------------

def test_grace_and_xeon_6776p_follow_their_sources():
    from designer.engine import hostcpu

    grace = CAT.get("cpu", "grace")
    assert (grace["cores"], grace["base_GHz"]) == (72, 3.1)  # NVIDIA; MLCommons GB200 NVL72 node
    # up to 512 GB/s per Grace CPU (1 TB/s per two-CPU superchip)
    assert hostcpu.memory_GBps(1, grace["memory_channels"], grace["memory_MTps"]) == pytest.approx(512, rel=1e-9)
    x = CAT.get("cpu", "xeon-6776p")  # heise.de table: 64 cores, 350 W, 2.3/3.6 GHz, 8 x DDR5-6400
    assert (x["cores"], x["tdp_W"], x["base_GHz"], x["all_core_GHz"]) == (64, 350, 2.3, 3.6)
    assert hostcpu.memory_GBps(2, x["memory_channels"], x["memory_MTps"]) == pytest.approx(2 * 8 * 6400 * 8 / 1e3)
    servers = {s: CAT.get("server", s) for s in ("gb200-nvl72", "gb300-nvl72", "hgx-b300")}
    assert servers["gb200-nvl72"]["cpu_model"] == servers["gb300-nvl72"]["cpu_model"] == "grace"
    # 36 Grace CPUs per NVL72 rack: 2,592 Arm cores (vendordeep.com)
    assert servers["gb200-nvl72"]["cpu_sockets"] * grace["cores"] == 2592
    assert servers["hgx-b300"]["cpu_model"] == "xeon-6776p"


def test_the_dpu_object_store_path_pays_the_bounce_copy_as_the_snap_path_does():
    from designer.engine import hostcpu

    hc = hostcpu.HostCosts.from_figures(FIG)
    kw = dict(offload=True, emulation=True, transport="rdma", encrypt=False, isolated=False,
              gpudirect_storage=False, c=hc)
    snap = hostcpu.storage_read_cycles_per_byte(**kw)["storage"]
    obj = hostcpu.storage_read_cycles_per_byte(**kw, object_store=True)["storage"]
    # both hand the host a local device whose bytes land in host memory: block IO + one copy
    assert obj == pytest.approx(snap) == pytest.approx(
        FIG["block_io_cycles"] / FIG["read_io_bytes"] + FIG["bounce_copy_cycles_per_byte"])
