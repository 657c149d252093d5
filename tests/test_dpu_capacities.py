"""DPU and SmartNIC capacities pinned to their published measurements (within +-20 %), and the
engine's use of them: each over-subscribed engine slows the work that needs it and is named."""

import pytest

from designer.engine import dpu
from designer.engine.resources import DpuCapacity, ResourceInputs, ServerGroup, assess, cost_figures
from designer.engine.resources_adapter import dpu_model_figures, smartnic_crypto_Gbps
from designer.topology.catalog import load_catalog

CAT = load_catalog()
FIG = cost_figures()
WITHIN = 0.2  # the acceptance tolerance of issue 13


def test_bluefield3_inline_crypto_is_the_measured_193_gbps_not_the_400_datasheet_figure():
    # blog.amododesign.com, 'The quest for 400G IPsec': strongSwan between two BlueField-3 DPUs,
    # 193 Gb/s IPsec against 390 Gb/s unencrypted
    assert CAT.get("dpu", "bluefield-3")["crypto_Gbps"] == pytest.approx(193, rel=WITHIN)
    assert "193" in CAT.source_of("dpu", "bluefield-3", "crypto_Gbps")


def test_connectx7_smartnic_crypto_follows_the_same_engine_measurement():
    # the ConnectX-7 is BlueField-3's chipset (fastswan.org): a crypto-enabled 400G ConnectX-7
    # encrypts at the BlueField-3 figure, 193 of 390 Gb/s
    fraction = FIG["inline_crypto_fraction_of_line"]
    assert fraction == pytest.approx(193 / 390, rel=WITHIN)
    cx7 = CAT.get("nic", "connectx-7")
    assert smartnic_crypto_Gbps(cx7, fraction) == pytest.approx(193, rel=WITHIN)
    assert CAT.get("nic", "connectx-7-crypto")["crypto_Gbps"] == pytest.approx(193, rel=WITHIN)


def test_bluefield2_arm_kernel_path_is_the_measured_half_of_100g():
    # Liu et al., arXiv 2105.06619: the BlueField-2's Arm cores may not sustain more than half of
    # the 100 Gb/s link with kernel-space packet processing
    arm, _ = dpu_model_figures(CAT, CAT.get("dpu", "bluefield-2"))
    assert arm == pytest.approx(50, rel=WITHIN)
    # tens of Gb/s, not the Tb/s that x86 cycles per byte on 8 cores x 2.5 GHz would give
    x86_equivalent = 8 * 2.5e9 / FIG["tcp_cycles_per_byte"] * 8 / 1e9
    assert x86_equivalent > 4 * arm


def test_bluefield3_dram_bandwidth_is_its_ddr5_interface():
    # BlueField-3 user guide: DDR5 at 5200 MT/s on a 128-bit (+16 ECC) interface
    _, dram = dpu_model_figures(CAT, CAT.get("dpu", "bluefield-3"))
    assert dram == pytest.approx(5200e6 * 16 / 1e9, rel=WITHIN)


def test_adapter_power_bluefield3_150w_connectx7_25w():
    # BlueField-3 DPU controller manual: up to 150 W; ConnectX-7 ~25 W class
    assert CAT.get("dpu", "bluefield-3")["power_W"] == pytest.approx(150, rel=WITHIN)
    assert CAT.get("nic", "connectx-7")["power_W"] == pytest.approx(25, rel=WITHIN)


def test_arm_path_rate_grows_with_packet_size_up_to_the_aggregation_limit():
    measured = FIG["arm_path_packet_bytes"]
    base = dpu.arm_path_Bps(50, measured, measured)
    assert base == pytest.approx(50e9 / 8)
    assert dpu.arm_path_Bps(50, 2 * measured, measured) == pytest.approx(2 * base)
    assert dpu.arm_path_Bps(50, 64 * measured, measured) == pytest.approx(dpu.MAX_PACKET_GAIN * base)
    assert dpu.arm_path_Bps(50, measured / 2, measured) == pytest.approx(base / 2)


def group(**kw):
    """One BlueField-3 server whose reads arrive on its DPU (NVMe/TCP through SNAP on the Arm cores)."""
    cap = DpuCapacity.of(1, 400, 193, 16, 2.0, 120, 83.2)
    base = dict(scenario="dpu", gpus=8, cpu_cores=112, cpu_GHz=3.0, dpus=1, rail_capacity=cap)
    return ServerGroup(**{**base, **kw})


def storage_bound(g, **kw):
    # 32 GB per 1 s iteration (32 GB/s, below the 50 GB/s line rate), storage target far faster:
    # the DPU limits the read
    return ResourceInputs(groups=(g,), iteration_s=1.0, samples_per_iteration=32, sample_bytes=1e9,
                          storage_read_GBps=1000, **kw)


def test_nvme_tcp_through_snap_is_limited_by_the_arm_kernel_path_and_named():
    r = assess(storage_bound(group(), storage_transport="tcp"), FIG)
    g = r.groups[0]
    assert g.read_limit == "DPU Arm cores"
    # the Arm complex moves about 120 Gb/s = 15 GB/s through its kernel path (SNAP's per-IO work
    # on top takes a little more): within 20 % of that
    assert g.read_achieved_GBps == pytest.approx(15.0, rel=WITHIN)
    assert r.data_stall_s > 0 and "DPU Arm cores" in " ".join(r.bottlenecks)
    # over RDMA the reads are moved by DMA (zero copy) and the Arm cores only do per-IO work
    rdma = assess(storage_bound(group(), storage_transport="rdma"), FIG)
    assert rdma.groups[0].read_limit == "DPU line rate"
    assert rdma.groups[0].read_achieved_GBps > 2 * g.read_achieved_GBps


def test_object_store_proxy_on_the_arm_cores_is_bounded_by_dpu_memory_or_arm_and_named():
    r = assess(storage_bound(group(), object_store_tls=True), FIG)
    g = r.groups[0]
    assert g.read_limit in ("DPU Arm cores", "DPU memory")
    assert g.read_achieved_GBps <= 15.0 * (1 + 1e-9)


def test_oversubscribed_dpu_memory_is_an_engine_of_its_own():
    cap = DpuCapacity.of(1, 400, 193, 16, 2.0, 120, 1.0)  # 1 GB/s of DPU memory
    r = assess(storage_bound(group(rail_capacity=cap), object_store_tls=True), FIG)
    assert r.groups[0].read_limit == "DPU memory"
    assert r.groups[0].read_achieved_GBps == pytest.approx(1.0 / FIG["dpu_dram_touches_per_arm_byte"])


def test_smartnic_keeps_rdma_under_encryption_and_is_bounded_by_its_crypto_engine():
    cap = DpuCapacity(400e9 / 8, 193e9 / 8, 0.0)
    g = ServerGroup(scenario="smartnic", gpus=8, cpu_cores=112, cpu_GHz=3.0, smartnic_capacity=cap,
                    rdma_bytes=200e9, comm_s=1.0, encrypt=True)
    r = assess(ResourceInputs(groups=(g,), iteration_s=2.0), FIG)
    assert r.host_cpu.by_task["crypto"] == 0.0 and r.host_cpu.by_task["network"] == 0.0
    # 100 GB per direction in 1 s = 800 Gb/s on a 193 Gb/s engine: 4.1x over-subscribed
    assert r.dpu["crypto"] == pytest.approx(800 / 193)
    assert "arm" not in r.dpu
    assert any("SmartNIC crypto engine" in b for b in r.bottlenecks)
    assert r.network_extra_s > 0


def test_new_adapters_line_rates_and_classes_follow_their_sources():
    # ConnectX-8 SuperNIC firmware release notes: 800 Gb/s XDR or 2 x 400GbE; BlueField-4
    # announcement (itdaily.com): 800 Gb/s, 64 Arm Neoverse V2 cores; BlueField-3 SuperNIC B3140H:
    # 400 Gb/s, a NIC-class part (NIC mode: no host-side Arm services), slot-powered (<= 75 W)
    assert CAT.get("nic", "connectx-8")["max_bandwidth_Gbps"] == pytest.approx(800, rel=WITHIN)
    bf4 = CAT.get("dpu", "bluefield-4")
    assert bf4["max_bandwidth_Gbps"] == pytest.approx(800, rel=WITHIN) and bf4["arm_cores"] == 64
    supernic = CAT.get("nic", "bluefield-3-supernic")
    assert supernic["max_bandwidth_Gbps"] == pytest.approx(400, rel=WITHIN)
    assert "bluefield-3-supernic" not in CAT.ids("dpu") and supernic["power_W"] <= 75
