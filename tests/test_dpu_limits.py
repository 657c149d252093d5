"""Issue 21: the limits where a DPU and a SmartNIC differ, each figure derived from its parts:
inline crypto per protocol and generation, storage emulation per IO size, packets (host switch,
OVS-DPDK, firewall, the embedded switch's packet rate, software OVS on the Arm cores), the memory
traffic of software crypto, and the further consumers (monitoring, checkpoint compression and
erasure coding)."""

import pytest

from designer.engine import resources
from designer.engine.dpu import DpuCapacity
from designer.engine.resources import ResourceInputs, ServerGroup, cost_figures
from designer.engine.resources_adapter import crypto_Gbps, smartnic_crypto_Gbps
from designer.topology.catalog import load_catalog
from designer.topology.design import SCENARIO_SPEC

CAT = load_catalog()
FIG = cost_figures(CAT)
HZ = 2.0e9  # ServerGroup's default clock


def one(inputs):
    return resources.assess(inputs)


# --- inline crypto per protocol and generation

def test_crypto_rate_follows_the_protocol_and_the_generation():
    bf3, bf2 = CAT.get("dpu", "bluefield-3"), CAT.get("dpu", "bluefield-2")
    cx7, cx6dx = CAT.get("nic", "connectx-7"), CAT.get("nic", "connectx-6-dx")
    frac = FIG["inline_crypto_fraction_of_line"]
    assert crypto_Gbps(bf3) == bf3["crypto_Gbps"] == 193  # strongSwan, tuning limit
    assert crypto_Gbps(bf3, "ktls") == bf3["ktls_Gbps"] == 400
    assert crypto_Gbps(bf3, "ipsec-packet") == bf3["ipsec_packet_Gbps"]
    assert crypto_Gbps(bf2, "ktls") == 200
    # a compute-fabric ConnectX-7 without crypto: IPsec crypto offload at the measured fraction of
    # its line rate (unchanged), kTLS at its generation's figure
    assert smartnic_crypto_Gbps(cx7, frac) == pytest.approx(frac * 400)
    assert smartnic_crypto_Gbps(cx7, frac, "ktls") == cx7["ktls_Gbps"]
    assert smartnic_crypto_Gbps(cx6dx, frac) == cx6dx["crypto_Gbps"] == 100
    assert smartnic_crypto_Gbps(cx6dx, frac, "ktls") == 200


def test_smartnic_crypto_engine_load_scales_with_the_protocol_rate():
    from designer.engine.compare import compare
    from designer.topology.templates import rail_optimized

    design = rail_optimized(servers=4)
    loads = {}
    for proto in ("ipsec-crypto", "ktls"):
        cmp = compare(design, CAT, workload="llama3-8b", global_batch=64,
                      scenario={"encryption": True, "crypto_offload": proto})
        loads[proto] = cmp.runs["smartnic"].dpu["crypto"]
    frac = FIG["inline_crypto_fraction_of_line"]
    # same traffic, engine rates frac x 400 vs 400 Gb/s: the load moves by their ratio
    assert loads["ktls"] == pytest.approx(loads["ipsec-crypto"] * frac * 400 / 400, rel=1e-6)


# --- storage emulation per IO size

def _snap_inputs(io_kib: float, transport: str = "rdma"):
    bf2 = CAT.get("dpu", "bluefield-2")
    # BlueField-2 line, crypto and SNAP figures; Arm cores and memory made ample (64 cores, no
    # DRAM limit) so that the emulation's IO ceiling, not the Arm kernel path, is what is tested
    cap = DpuCapacity.of(1, bf2["max_bandwidth_Gbps"], bf2["crypto_Gbps"], 64, bf2["arm_GHz"],
                         8 * bf2["arm_tcp_Gbps"], 0.0, bf2["eswitch_Mpps"],
                         bf2[f"snap_{transport}_kiops"])
    group = ServerGroup(count=1, scenario="dpu", dpus=1, rail_capacity=cap)
    return ResourceInputs(groups=(group,), iteration_s=1.0, samples_per_iteration=1000,
                          sample_bytes=1e8, storage_read_GBps=1e4, read_io_bytes=io_kib * 1024,
                          storage_transport=transport), bf2


def test_snap_io_rate_caps_small_ios_and_the_line_rate_large_ones():
    inp, bf2 = _snap_inputs(4, "tcp")
    g = one(inp).groups[0]
    assert g.read_limit == "DPU storage emulation"
    # 2.5 M IOs/s of 4 KiB each (NVIDIA's BlueField-2 NVMe/TCP measurement)
    assert g.read_achieved_GBps == pytest.approx(bf2["snap_tcp_kiops"] * 1e3 * 4096 / 1e9)
    inp, bf2 = _snap_inputs(128, "rdma")
    g = one(inp).groups[0]
    assert g.read_limit == "DPU line rate"  # 20.75 M x 128 KiB is far above 200 Gb/s
    assert g.read_achieved_GBps == pytest.approx(bf2["max_bandwidth_Gbps"] / 8)


# --- packets

def _host(**kw):
    g = dict(count=1, scenario="host", rdma=False, tcp_bytes=4e9, comm_s=0.5, cpu_cores=4096)
    g.update(kw)
    return ResourceInputs(groups=(ServerGroup(**g),), iteration_s=1.0)


def _cores(rep, task):
    return rep.groups[0].host_by_task[task]


def _seconds(rep):
    return rep.iteration_s - rep.straggler_s - rep.checkpoint_s


def test_host_switch_costs_per_packet_of_the_tenant_packet_size_and_datapath():
    bulk = one(_host(isolated=True))
    small = one(_host(isolated=True, tenant_packet_bytes=64))
    dpdk = one(_host(isolated=True, tenant_packet_bytes=64, vswitch="ovs-dpdk"))
    for rep, pkt, cpp in ((bulk, FIG["vswitch_packet_bytes"], FIG["vswitch_cycles_per_packet"]),
                          (small, 64, FIG["vswitch_cycles_per_packet"]),
                          (dpdk, 64, FIG["ovs_dpdk_cycles_per_packet"])):
        assert _cores(rep, "virtualization") == pytest.approx(4e9 / pkt * cpp / (_seconds(rep) * HZ))
    assert FIG["ovs_dpdk_cycles_per_packet"] == 1100.0


def test_firewall_conntrack_costs_per_kernel_packet_and_leaves_with_a_smartnic():
    rep = one(_host(firewall=True, tenant_packet_bytes=1500))
    assert _cores(rep, "firewall") == pytest.approx(
        4e9 / 1500 * FIG["conntrack_cycles_per_packet"] / (_seconds(rep) * HZ))
    nic = ServerGroup(count=1, scenario="smartnic", rdma=False, tcp_bytes=4e9, comm_s=0.5, cpu_cores=4096,
                      firewall=True, smartnic_capacity=DpuCapacity(50e9, 25e9, 0.0))
    # no host firewall work: the task is not reported at all (an optional task)
    assert one(ResourceInputs(groups=(nic,), iteration_s=1.0)).groups[0].host_by_task.get("firewall", 0.0) == 0.0
    assert "firewall" not in one(_host()).host_cpu.by_task


def test_eswitch_packet_rate_slows_small_packet_tenant_traffic():
    # 11.52 GB of RDMA traffic (sent + received) in a 0.5 s window: 5.76 GB each way, 11.52 GB/s,
    # 180 Mpps of 64-byte packets against the ~90 Mpps the BlueField-3/ConnectX-7 eSwitch forwards
    cap = DpuCapacity(50e9, 24e9, 0.0, eswitch_pps=90e6)
    g = ServerGroup(count=1, scenario="smartnic", rdma_bytes=11.52e9, comm_s=0.5, isolated=True,
                    tenant_packet_bytes=64, smartnic_capacity=cap)
    rep = one(ResourceInputs(groups=(g,), iteration_s=1.0))
    u = rep.groups[0].dpu_utilization
    assert u["eswitch"] == pytest.approx(11.52e9 / 2 / 0.5 / 64 / 90e6)
    assert rep.groups[0].network_slowdown == pytest.approx(u["eswitch"])
    assert any("eswitch engine" in b for b in rep.bottlenecks)
    bulk = one(ResourceInputs(groups=(ServerGroup(**{**g.__dict__, "tenant_packet_bytes": 0.0}),),
                              iteration_s=1.0))
    assert "eswitch" not in bulk.groups[0].dpu_utilization  # bulk flows: not checked


def test_software_ovs_on_arm_cores_runs_at_the_measured_arm_path_rate():
    bf2 = CAT.get("dpu", "bluefield-2")
    cap = DpuCapacity.of(1, 200, 100, 8, 2.5, bf2["arm_tcp_Gbps"], 0.0)
    g = ServerGroup(count=1, scenario="dpu", dpus=1, rail_capacity=cap, rdma_bytes=6.25e9, comm_s=0.5,
                    isolated=True, dpu_ovs_offload=False)
    rep = one(ResourceInputs(groups=(g,), iteration_s=1.0))
    # 12.5 GB/s sent + received through the Arm kernel path of 50 Gb/s = 6.25 GB/s at 1500-byte
    # frames (Liu et al. 2021): twice what it moves
    assert rep.groups[0].dpu_utilization["arm"] == pytest.approx(6.25e9 / 0.5 / (bf2["arm_tcp_Gbps"] * 1e9 / 8))


def test_tenant_packet_size_out_of_range_is_refused_with_the_setting_named():
    with pytest.raises(ValueError, match="tenant_packet_bytes"):
        one(_host(tenant_packet_bytes=32))
    for name in ("crypto_offload", "tenant_packet_bytes", "vswitch", "firewall_conntrack",
                 "monitoring_agents", "checkpoint_compression", "checkpoint_erasure_coding"):
        assert name in SCENARIO_SPEC


# --- memory bandwidth of software crypto

def test_software_crypto_adds_its_memory_passes_to_the_kernel_copies():
    plain = one(_host(kernel_copy_membw=True, host_memory_GBps=2.0))
    enc = one(_host(kernel_copy_membw=True, host_memory_GBps=2.0, encrypt=True))
    share = FIG["kernel_copy_memory_share"]
    copy, crypto = FIG["kernel_copy_memory_passes"], FIG["software_crypto_memory_passes"]
    # 8 GB/s of kernel-path traffic against 2 GB/s of host memory bandwidth
    assert plain.groups[0].network_slowdown == pytest.approx(4e9 / 0.5 * copy / (2e9 * share))
    assert enc.groups[0].network_slowdown == pytest.approx(4e9 / 0.5 * (copy + crypto) / (2e9 * share))


# --- further consumers

def test_monitoring_agents_stay_on_the_host_in_every_mode():
    host = one(_host(monitoring=True))
    cap = DpuCapacity.of(1, 400, 193, 16, 2.0, 120, 83.2)
    dpu = one(ResourceInputs(groups=(ServerGroup(count=1, scenario="dpu", dpus=1, rail_capacity=cap,
                                                 rdma=False, tcp_bytes=4e9, comm_s=0.5, cpu_cores=4096,
                                                 monitoring=True),), iteration_s=1.0))
    for rep in (host, dpu):
        assert _cores(rep, "monitoring") == FIG["monitoring_agent_cores"]
        assert rep.host_cpu.by_task["monitoring"] == pytest.approx(FIG["monitoring_agent_cores"] / 4096)


def test_checkpoint_compression_and_erasure_coding_cost_host_cycles_and_bound_the_write():
    base = dict(groups=(ServerGroup(count=1, cpu_cores=16),), iteration_s=1.0, parameters=1e9,
                storage_write_GBps=1e4, checkpoint_every_iterations=10)
    plain = one(ResourceInputs(**base))
    coded = one(ResourceInputs(**base, checkpoint_compression=True, checkpoint_erasure_coding=True))
    cpb = FIG["compression_cycles_per_byte"] + FIG["erasure_code_cycles_per_byte"]
    ckpt_bytes = 1e9 * FIG["checkpoint_bytes_per_param"]
    # written at 16 cores x 2 GHz / 10.25 cycles per byte
    assert coded.storage.checkpoint_write_s == pytest.approx(ckpt_bytes / (16 * HZ / cpb))
    assert coded.storage.checkpoint_write_s > plain.storage.checkpoint_write_s
    cores = coded.groups[0].host_by_task["checkpoint_coding"]
    assert cores == pytest.approx(ckpt_bytes * cpb / 10 / (_seconds(coded) * HZ))
    assert FIG["compression_cycles_per_byte"] == pytest.approx(4.9e9 / 530e6, rel=1e-3)


def test_overlay_without_tunnel_offload_is_switched_frame_by_frame():
    off = one(_host(isolated=True, tunnel_offload=False, frame_bytes=9000.0))
    on = one(_host(isolated=True))
    # 64 KiB aggregates with tunnel TSO/LRO, 9000-byte jumbo frames without: 65536 / 9000 times the cycles
    assert _cores(off, "virtualization") / _seconds(on) * _seconds(off) == pytest.approx(
        _cores(on, "virtualization") * FIG["vswitch_packet_bytes"] / 9000)
    # a SmartNIC encapsulates in its embedded switch: no host switch work either way
    nic = ServerGroup(count=1, scenario="smartnic", rdma=False, tcp_bytes=4e9, comm_s=0.5, cpu_cores=4096,
                      isolated=True, tunnel_offload=False, smartnic_capacity=DpuCapacity(50e9, 25e9, 0.0))
    assert one(ResourceInputs(groups=(nic,), iteration_s=1.0)).groups[0].host_by_task["virtualization"] == 0.0


def test_host_memory_caps_software_tls_reads_before_the_cores():
    # an object store over HTTPS: host-managed, the host decrypts every byte in software (3 memory
    # passes with the copy); with a SmartNIC's kTLS offload only the copy's pass is left
    def inputs(scenario, **g):
        grp = ServerGroup(count=1, scenario=scenario, cpu_cores=4096, kernel_copy_membw=True,
                          host_memory_GBps=30.0, **g)
        return ResourceInputs(groups=(grp,), iteration_s=1.0, samples_per_iteration=100,
                              sample_bytes=1e9, storage_read_GBps=1e4, object_store_tls=True)
    share = FIG["kernel_copy_memory_share"]
    copy, crypto = FIG["kernel_copy_memory_passes"], FIG["software_crypto_memory_passes"]
    host = one(inputs("host")).groups[0]
    nic = one(inputs("smartnic", smartnic_capacity=DpuCapacity(400e9, 400e9, 0.0))).groups[0]
    assert host.read_limit == nic.read_limit == "host memory"
    assert host.read_achieved_GBps == pytest.approx(30.0 * share / (copy + crypto))
    assert nic.read_achieved_GBps == pytest.approx(30.0 * share / copy)


def test_host_managed_small_packets_cross_the_same_embedded_switch():
    # the same 180 Mpps of 64-byte tenant packets over RDMA (SR-IOV functions) on a host-managed
    # server: its NICs' embedded switch forwards them at the same ~90 Mpps, so the host run is
    # not spared the limit the SmartNIC run meets
    kw = dict(count=1, rdma_bytes=11.52e9, comm_s=0.5, isolated=True, tenant_packet_bytes=64)
    host = one(ResourceInputs(groups=(ServerGroup(scenario="host", eswitch_pps=90e6, **kw),), iteration_s=1.0))
    nic = one(ResourceInputs(groups=(ServerGroup(scenario="smartnic", smartnic_capacity=DpuCapacity(
        50e9, 24e9, 0.0, eswitch_pps=90e6), **kw),), iteration_s=1.0))
    assert host.groups[0].dpu_utilization["eswitch"] == pytest.approx(nic.groups[0].dpu_utilization["eswitch"])
    assert host.groups[0].network_slowdown == pytest.approx(nic.groups[0].network_slowdown) == pytest.approx(2.0)
    assert any(b.startswith("NIC eswitch engine") for b in host.bottlenecks)
