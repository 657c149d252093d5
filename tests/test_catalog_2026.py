"""2025-26 catalog entries pinned to their published figures (the source of each reference value is
named next to it): Blackwell / Blackwell Ultra GPUs, GB200/GB300 NVL72 rack systems, HGX B300,
Quantum-X800 and Spectrum-X800 switches, the NVL72 rack."""

from __future__ import annotations

import pytest

from designer.topology.catalog import load_catalog
from designer.topology.model import Component, Topology
from designer.topology.validation import Resolver, component_power_W

CAT = load_catalog()
NEW = {"gpu": ["b300", "gb200-gpu", "gb300-gpu"], "server": ["hgx-b300", "gb200-nvl72", "gb300-nvl72"],
       "switch": ["q3400", "sn5610", "sn5400"], "rack": ["rack-nvl72"]}


def near(value, reference, rel=0.01):
    return value == pytest.approx(reference, rel=rel)


@pytest.mark.parametrize("kind,id", [(k, i) for k, ids in NEW.items() for i in ids])
def test_every_new_figure_names_its_source(kind, id):
    entry = CAT.get(kind, id)
    for field, value in entry.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            source = CAT.source_of(kind, id, field)
            assert len(source) > 20, f"{kind} {id}.{field}: {source!r}"
            # an assumption says so
            if "assumed" not in source and "derived" not in source:
                assert any(w in source for w in ("docs.nvidia", "NVIDIA", ".com", ".io", "manual")), source


def test_gb200_nvl72_rack_totals():
    # NVIDIA GB200 NVL72 specifications (rack column, with sparsity): FP4 1,440 PFLOPS, FP8/FP6 720,
    # FP16/BF16 360, TF32 180; up to 13.4 TB HBM3e at 576 TB/s; NVLink 130 TB/s; 72 GPUs, 36 CPUs
    system = CAT.get("server", "gb200-nvl72")
    gpu = CAT.get("gpu", system["gpu_model"])
    n = system["gpu_count"]
    assert n == 72 and system["nvlink_domain"] == 72 and system["nvswitch"]
    assert system["cpu_sockets"] == 36
    assert near(n * 2 * gpu["fp4_dense_tflops"], 1_440_000)
    assert near(n * 2 * gpu["fp8_dense_tflops"], 720_000)
    assert near(n * 2 * gpu["bf16_dense_tflops"], 360_000)
    assert near(n * 2 * gpu["tf32_dense_tflops"], 180_000)
    assert near(n * gpu["memory_GB"], 13_400)
    assert near(n * gpu["memory_bw_TBps"], 576)
    assert near(n * 2 * gpu["nvlink_GBps"] / 1000, 130, rel=0.01)  # 72 x 1.8 = 129.6
    assert gpu["tdp_W"] == 1200  # "configurable up to 1,200 W"


def test_gb300_nvl72_rack_totals():
    # GB300 NVL72 (GTC 2025; verda.com rack aggregate without sparsity): FP4 1,080 PFLOPS dense,
    # FP8 360, BF16 180; 20 TB HBM3e at 576 TB/s; 130 TB/s NVLink; 1,400 W GPUs
    system = CAT.get("server", "gb300-nvl72")
    gpu = CAT.get("gpu", system["gpu_model"])
    n = system["gpu_count"]
    assert n == 72 and system["nvlink_domain"] == 72
    assert near(n * gpu["fp4_dense_tflops"], 1_080_000)
    assert near(n * gpu["fp8_dense_tflops"], 360_000)
    assert near(n * gpu["bf16_dense_tflops"], 180_000)
    assert near(n * gpu["memory_GB"] / 1000, 20, rel=0.01)
    assert near(n * gpu["memory_bw_TBps"], 576)
    assert gpu["tdp_W"] == 1400


def test_nvl72_networking_matches_the_trays():
    # DGX GB200 user guide: per compute tray 4x ConnectX-7 400G and 2x BlueField-3; 18 trays.
    # NVL72 enterprise RA / glennklockwood.com: GB300 NVL72 has 72 ConnectX-8 and 18 BlueField.
    gb200, gb300 = CAT.get("server", "gb200-nvl72"), CAT.get("server", "gb300-nvl72")
    assert (gb200["nic_model"], gb200["nic_count"], gb200["dpu_model"], gb200["dpu_count"]) == \
        ("connectx-7", 4 * 18, "bluefield-3", 2 * 18)
    assert (gb300["nic_model"], gb300["nic_count"], gb300["dpu_model"], gb300["dpu_count"]) == \
        ("connectx-8", 72, "bluefield-3", 18)
    assert CAT.get("nic", "connectx-7")["port_speed_Gbps"] == 400
    assert CAT.get("nic", "connectx-8")["port_speed_Gbps"] == 800


def _system_power_kW(server_model: str) -> float:
    """What the design rules count for the system with its catalog NICs and DPUs fitted."""
    s = CAT.get("server", server_model)
    topo = Topology()
    topo.add_component(Component("s", "gpu_server", server_model))
    cards = [(s["nic_model"], "nic")] * s["nic_count"] + [(s["dpu_model"], "dpu")] * s["dpu_count"]
    for i, (model, kind) in enumerate(cards):
        topo.add_component(Component(f"c{i}", kind, model, parent="s", slot=i))
    return component_power_W(topo, topo.components["s"], Resolver(CAT)) / 1000.0


def test_system_power_adds_up_to_the_published_maximum():
    # The design rules count a server as GPUs + NICs + DPUs + base. Published maxima:
    # GB300 NVL72 "full rack requiring up to 142 kW" (NVIDIA NVL72 enterprise RA); GB200 NVL72
    # ~120 kW (kshirol-dev notes); DGX B300 ~14 kW (SuperPOD B300 RA: ~56 kW for four per rack).
    for model, kW in (("gb300-nvl72", 142.0), ("gb200-nvl72", 120.0), ("hgx-b300", 14.0)):
        assert near(_system_power_kW(model), kW), model


def test_nvl72_fits_its_rack():
    rack = CAT.get("rack", "rack-nvl72")
    for model in ("gb200-nvl72", "gb300-nvl72"):
        s = CAT.get("server", model)
        assert s["rack_units_used"] <= rack["rack_units"]
        assert _system_power_kW(model) <= rack["power_budget_kW"]
    # DGX SuperPOD GB200 RA: 1.2 MW for a scalable unit of 8 racks
    assert near(rack["power_budget_kW"] * 8, 1200)


def test_hgx_b300_per_gpu_and_baseboard():
    # HGX B300 (8 GPUs, with sparsity): FP8 72 PFLOPS, BF16 36 PFLOPS; NVLink 14.4 TB/s total;
    # 1,100 W per GPU (verda.com B300 column); 8 ConnectX-8 on the baseboard
    s, g = CAT.get("server", "hgx-b300"), CAT.get("gpu", "b300")
    assert s["gpu_count"] == 8 and s["nvlink_domain"] == 8
    assert near(8 * 2 * g["fp8_dense_tflops"], 72_000)
    assert near(8 * 2 * g["bf16_dense_tflops"], 36_000)
    assert near(8 * 2 * g["nvlink_GBps"] / 1000, 14.4)
    assert g["tdp_W"] == 1100 and (s["nic_model"], s["nic_count"]) == ("connectx-8", 8)


def test_blackwell_ultra_raises_fp4_not_bf16():
    # verda.com per-GPU table: B200 FP4 9 PF -> GB300 15 PF dense (+67%); BF16 2.25 -> 2.5 PF (+11%)
    b200, gb300 = CAT.get("gpu", "b200"), CAT.get("gpu", "gb300-gpu")
    assert near(gb300["fp4_dense_tflops"] / b200["fp4_dense_tflops"], 15 / 9)
    assert near(gb300["bf16_dense_tflops"] / b200["bf16_dense_tflops"], 2.5 / 2.25)
    for g in CAT.entries("gpu"):
        assert g["fp4_dense_tflops"] == 0 or g["fp4_dense_tflops"] >= g["fp8_dense_tflops"], g["id"]
        assert g["fp4_dense_tflops"] == 0 or g["nvlink_gen"] >= 5, g["id"]  # FP4 arrived with Blackwell


def test_xdr_and_800g_ethernet_switches():
    # Quantum-X800 Q3400-RA: 144 ports of 800 Gb/s = 115.2 Tb/s, fourth-generation SHARP
    q = CAT.get("switch", "q3400")
    assert q["ports"] * q["port_speed_Gbps"] == 115_200 and q["sharp"] and q["medium"] == "infiniband"
    # Spectrum-4 (SN5610, Spectrum-X800): 51.2 Tb/s = 64 x 800GbE; SN5400: 64 x 400GbE
    for model, ports, speed in (("sn5610", 64, 800), ("sn5400", 64, 400)):
        s = CAT.get("switch", model)
        assert (s["ports"], s["port_speed_Gbps"], s["medium"], s["sharp"]) == (ports, speed, "ethernet", False)
