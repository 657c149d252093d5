"""Each host consumer's cost moves from the host CPU to the DPU, and meets the DPU's limit there."""

from dataclasses import replace

import pytest

from designer.engine.resources import ResourceInputs, ServerGroup, assess, cost_figures

FIG = cost_figures()
GHZ = 3.0
# one DGX H100-like server: 112 cores at 3.0 GHz all-core, 8 BlueField-3 (400 Gb/s line and crypto)
SERVER = ServerGroup(count=1, gpus=8, cpu_cores=112, cpu_GHz=GHZ, dpus=8, dpu_arm_cores=16,
                     dpu_arm_GHz=2.0, dpu_crypto_Gbps=400, dpu_bandwidth_Gbps=400)


def run(scenario, iteration_s=2.0, inputs=None, **group):
    g = replace(SERVER, scenario=scenario, **group)
    return assess(ResourceInputs(groups=(g,), iteration_s=iteration_s, **(inputs or {})), FIG)


def cores(report, task):
    return report.groups[0].host_by_task[task]


#: kernel TCP cycles per byte of collective traffic (sent + received): collectives send what they
#: receive, half the bytes at the send figure and half at the receive figure (host_cpu.toml)
TCP = (FIG["tcp_send_cycles_per_byte"] + FIG["tcp_cycles_per_byte"]) / 2


def test_kernel_tcp_costs_host_cycles_per_byte_and_rdma_almost_none():
    tcp = run("host", tcp_bytes=30e9, comm_s=1.0)
    rdma = run("host", rdma_bytes=30e9, comm_s=1.0)
    # 30 GB x the mean kernel TCP figure (cycles/B) over a 2 s iteration on 3 GHz cores
    assert cores(tcp, "network") == pytest.approx(30e9 * TCP / (2.0 * GHZ * 1e9), rel=1e-6)
    assert cores(rdma, "network") == 0.0


def test_encrypted_collectives_move_from_host_aes_to_dpu_crypto_engine():
    host = run("host", rdma_bytes=40e9, comm_s=1.0, encrypt=True)
    off = run("dpu", rdma_bytes=40e9, comm_s=1.0, encrypt=True)
    # host: software AES-GCM on every byte, and the traffic leaves RDMA for kernel TCP
    assert cores(host, "crypto") > 0 and cores(host, "network") > 0
    assert cores(off, "crypto") == 0.0 and cores(off, "network") == 0.0
    # DPU: 40 GB sent + received in 1 s = 20 GB/s = 160 Gb/s each direction, on 8 x 400 Gb/s
    # crypto engines (each direction)
    assert off.dpu["crypto"] == pytest.approx(160 / 3200)


def test_dpu_crypto_engine_limit_slows_collectives():
    # 8 DPUs x 10 Gb/s = 80 Gb/s of crypto each direction for 160 Gb/s each direction: twice as long
    off = run("dpu", rdma_bytes=40e9, comm_s=1.0, encrypt=True, dpu_crypto_Gbps=10)
    assert off.dpu["crypto"] == pytest.approx(2.0)
    assert off.network_extra_s == pytest.approx(1.0)
    assert any("crypto engine" in b for b in off.bottlenecks)


def test_collectives_on_the_dpu_are_limited_by_its_line_rate():
    # 2 DPUs x 400 Gb/s = 100 GB/s each direction; 150 GB sent + received in 1 s is 75 GB/s each
    # direction (0.75 of the line), 300 GB is 150 GB/s (over-subscribed 1.5x)
    assert run("dpu", dpus=2, rdma_bytes=150e9, comm_s=1.0).dpu["line"] == pytest.approx(0.75)
    off = run("dpu", dpus=2, rdma_bytes=300e9, comm_s=1.0)
    assert off.dpu["line"] == pytest.approx(1.5)
    assert off.groups[0].network_slowdown == pytest.approx(1.5)


def test_storage_only_dpus_carry_no_collectives():
    # 8 rail DPUs carry 160 GB/s each direction (0.4 of 8 x 50 GB/s); 2 storage DPUs carry none,
    # so the line load is 0.4, not 160 / (10 x 50) = 0.32 nor 320 / (10 x 50) = 0.64
    off = run("dpu", dpus=10, rail_dpus=8, storage_dpus=2, rdma_bytes=320e9, comm_s=1.0)
    assert off.dpu["line"] == pytest.approx(0.4)


def test_slowed_dp_collectives_cost_only_what_outgrows_the_backward_pass():
    # kernel TCP collectives that need 2x the free cores take 2x as long. DP 0.5 s hidden behind
    # 1.2 s of backward: slowed to 1.0 s it still hides (+0). With 0.3 s of crossing TP besides
    # (0.8 s in all) the TP part costs 0.3 s more.
    need = 2 * 112  # cores while the collectives run
    tcp = need * GHZ * 1e9 / TCP  # bytes in a 1 s window
    hidden = run("host", tcp_bytes=tcp * 0.5, comm_s=0.5, dp_comm_s=0.5,
                 inputs={"dp_time_s": 0.5, "dp_overlap_s": 1.2})
    assert hidden.groups[0].network_slowdown == pytest.approx(2.0)
    assert hidden.network_extra_s == 0.0
    mixed = run("host", tcp_bytes=tcp * 0.8, comm_s=0.8, dp_comm_s=0.5,
                inputs={"dp_time_s": 0.5, "dp_overlap_s": 1.2})
    assert mixed.network_extra_s == pytest.approx(0.3)
    # DP 1.0 s against 1.2 s of backward: slowed to 2.0 s, 0.8 s exposed instead of 0
    exposed = run("host", tcp_bytes=tcp, comm_s=1.0, dp_comm_s=1.0,
                  inputs={"dp_time_s": 1.0, "dp_overlap_s": 1.2})
    assert exposed.network_extra_s == pytest.approx(0.8)


def test_storage_initiator_moves_to_dpu_snap_and_is_limited_by_arm_cores():
    io = {"samples_per_iteration": 1000, "sample_bytes": 10e6, "storage_read_GBps": 1000}
    host = run("host", inputs=io)
    off = run("dpu", inputs=io)
    assert cores(off, "storage") < cores(host, "storage")
    assert off.dpu["arm"] > 0
    # SNAP costs per IO on the Arm cores: with 4 KiB IOs and one slow Arm core it limits the read
    small = dict(FIG, read_io_bytes=4096)
    g = replace(SERVER, scenario="dpu", dpus=1, dpu_arm_cores=1, dpu_arm_GHz=0.5, gpudirect_storage=True)
    slow = assess(ResourceInputs(groups=(g,), iteration_s=2.0, **io), small)
    arm_limit = 0.5e9 / (FIG["snap_arm_cycles_per_io"] / 4096)
    assert slow.groups[0].read_limit == "DPU Arm cores"
    assert slow.groups[0].read_achieved_GBps == pytest.approx(arm_limit / 1e9)
    assert slow.data_stall_s == pytest.approx(10e9 / arm_limit - 2.0)


def test_tenant_isolation_moves_from_host_vswitch_to_dpu_eswitch_or_arm_cores():
    host = run("host", tcp_bytes=20e9, comm_s=1.0, isolated=True)
    asap2 = run("dpu", tcp_bytes=20e9, comm_s=1.0, isolated=True)
    software = run("dpu", tcp_bytes=20e9, comm_s=1.0, isolated=True, dpu_ovs_offload=False)
    expected = 20e9 / FIG["vswitch_packet_bytes"] * FIG["vswitch_cycles_per_packet"] / (2.0 * GHZ * 1e9)
    assert cores(host, "virtualization") == pytest.approx(expected, rel=1e-6)
    assert cores(asap2, "virtualization") == 0.0 and asap2.dpu["arm"] == 0.0
    assert cores(software, "virtualization") == 0.0 and software.dpu["arm"] > 0
    # one Arm core at 0.01 GHz cannot switch 20 GB/s in software: the Arm engine limits the flows
    tiny = run("dpu", tcp_bytes=20e9, comm_s=1.0, isolated=True, dpu_ovs_offload=False, dpus=1,
               dpu_arm_cores=1, dpu_arm_GHz=0.01)
    assert tiny.dpu["arm"] > 1 and tiny.groups[0].network_slowdown == pytest.approx(tiny.dpu["arm"])


def test_data_loading_stays_on_the_host():
    io = {"samples_per_iteration": 8000, "preprocess_core_s_per_sample": 0.005}
    host, off = run("host", inputs=io), run("dpu", inputs=io)
    assert cores(host, "data_loading") == pytest.approx(8000 * 0.005 / 2.0)
    assert cores(off, "data_loading") == cores(host, "data_loading")


def test_saturated_host_cpu_slows_the_flows_and_says_so():
    # 400 GB over kernel TCP in a 1 s window needs 400e9 * 0.65 / 3e9 = 86.7 cores per second...
    # with 100 cores busy on data loading only 12 remain: flows take 86.7 / 12 = 7.2x as long
    io = {"samples_per_iteration": 400, "preprocess_core_s_per_sample": 0.5}
    r = run("host", tcp_bytes=400e9, comm_s=1.0, inputs=io)
    need = 400e9 * TCP / (GHZ * 1e9)
    slow = need / (112 - 100)
    assert r.groups[0].network_slowdown == pytest.approx(slow, rel=1e-6)
    assert r.network_extra_s == pytest.approx(slow - 1.0, rel=1e-6)
    assert r.host_cpu.saturated
    assert f"host CPU saturated: network flows slowed to {100 / slow:.0f}%" in " ".join(r.flags)


def test_dpu_scenario_without_a_dpu_falls_back_to_the_host_and_flags_it():
    r = run("dpu", dpus=0, rdma_bytes=10e9, comm_s=1.0, encrypt=True)
    assert r.groups[0].scenario == "host" and cores(r, "crypto") > 0
    assert any("no DPU" in f for f in r.flags)


@pytest.mark.parametrize("bad, message", [
    ({"scenario": "cloud"}, "scenario must be one of"),
    ({"cpu_cores": 0}, "CPU cores"),
    ({"tcp_bytes": -1.0}, "tcp_bytes must not be negative"),
])
def test_bad_input_is_refused_with_a_clear_message(bad, message):
    with pytest.raises(ValueError, match=message):
        run(bad.pop("scenario", "host"), **bad)
