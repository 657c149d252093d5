"""Tenant isolation (SR-IOV, overlay, bare-metal) and per-tenant QoS on shared storage, packet and
IO size as inputs, and the host consumers switched per scenario."""

import pytest

from designer.engine import pipeline
from designer.engine.resources import (DpuCapacity, ResourceInputs, ServerGroup, assess,
                                       cost_figures, noisy_share)
from designer.topology.catalog import load_catalog
from designer.topology.design import SCENARIO_SPEC
from designer.topology.templates import rail_optimized

CAT = load_catalog()
FIG = cost_figures()


def test_offload_and_per_server_offer_the_three_modes():
    assert SCENARIO_SPEC["offload"].choices == ("host", "smartnic", "dpu")
    assert SCENARIO_SPEC["per_server"].choices == ("host", "smartnic", "dpu")
    assert SCENARIO_SPEC["offload"].problem("cloud") and not SCENARIO_SPEC["offload"].problem("smartnic")


def test_each_host_consumer_is_a_scenario_switch_off_by_default():
    for name in ("nccl_proxy", "parallel_fs_client", "checkpoint_via_host", "object_store_tls",
                 "k8s_agents", "irq_handling", "kernel_copy_membw"):
        assert SCENARIO_SPEC[name].type is bool and SCENARIO_SPEC[name].default is False


def test_noisy_neighbours_take_the_time_the_other_jobs_write_checkpoints():
    # 4 jobs; each job's share of the write rate is 10 GB/s (the inputs hold the share), so a job
    # writing without QoS takes all 40 GB/s: 1e10 parameters x 16 B = 160 GB in 4 s, every 100
    # iterations of 1 s; the 3 other jobs hold the storage 3 x 4 / 100 = 12 % of the time
    g = ServerGroup(gpus=8, cpu_cores=112, cpu_GHz=3.0)
    inp = ResourceInputs(groups=(g,), iteration_s=1.0, tenants=4, parameters=1e10,
                         checkpoint_every_iterations=100, storage_read_GBps=10, storage_write_GBps=10,
                         samples_per_iteration=8, sample_bytes=2e9, tenant_qos=False)
    assert noisy_share(inp, FIG) == pytest.approx(3 * 4 / 100)
    shared = assess(inp, FIG)
    fair = assess(ResourceInputs(**{**inp.__dict__, "tenant_qos": True}), FIG)
    assert shared.groups[0].read_achieved_GBps == pytest.approx(fair.groups[0].read_achieved_GBps * (1 - 0.12))
    assert any("noisy neighbours" in b for b in shared.bottlenecks)
    assert not any("noisy neighbours" in b for b in fair.bottlenecks)


def run(design, **scenario):
    return pipeline.run(design, CAT, scenario=scenario, workload="llama3-8b", global_batch=64)


def test_sriov_isolation_skips_the_host_virtual_switch_an_overlay_pays_it():
    design = rail_optimized(servers=8)
    common = dict(offload="host", tenants=2, encryption=True)  # encrypted: collectives on kernel TCP
    overlay = run(design, isolation="overlay", **common)
    sriov = run(design, isolation="sriov", **common)
    assert overlay.host_cpu["by_task"]["virtualization"] > 0
    assert sriov.host_cpu["by_task"]["virtualization"] == 0.0


def test_bare_metal_isolation_needs_a_dpu_to_enforce_it():
    design = rail_optimized(servers=8, dpu="bluefield-3")
    host = run(design, offload="host", isolation="bare-metal")
    dpu = run(design, offload="dpu", isolation="bare-metal")
    assert any("bare-metal tenant isolation" in w for w in host.warnings)
    assert not any("bare-metal tenant isolation" in w for w in dpu.warnings)


def test_jumbo_frames_speed_up_the_arm_kernel_path():
    cap = DpuCapacity.of(1, 400, 193, 16, 2.0, 120, 83.2)
    g = ServerGroup(scenario="dpu", gpus=8, cpu_cores=112, cpu_GHz=3.0, dpus=1, rail_capacity=cap)
    base = dict(groups=(g,), iteration_s=1.0, samples_per_iteration=32, sample_bytes=1e9,
                storage_read_GBps=1000, object_store_tls=True)
    std = assess(ResourceInputs(**base, packet_bytes=1500), FIG).groups[0]
    jumbo = assess(ResourceInputs(**base, packet_bytes=3000), FIG).groups[0]
    assert std.read_limit == "DPU Arm cores" and jumbo.read_achieved_GBps > std.read_achieved_GBps


def test_larger_storage_ios_cost_the_host_fewer_cycles_per_byte():
    g = ServerGroup(gpus=8, cpu_cores=112, cpu_GHz=3.0)
    base = dict(groups=(g,), iteration_s=1.0, samples_per_iteration=8, sample_bytes=1e9,
                storage_read_GBps=1000)
    small = assess(ResourceInputs(**base, read_io_bytes=4096), FIG)
    large = assess(ResourceInputs(**base, read_io_bytes=1 << 20), FIG)
    # per IO: the NVMe-oF initiator's cycles over the IO size (models/costs/host_cpu.toml)
    per_byte = FIG["nvmeof_initiator_io_cycles"] * (1 / 4096 - 1 / (1 << 20))
    moved = small.groups[0].host_by_task["storage"] - large.groups[0].host_by_task["storage"]
    assert moved == pytest.approx(8e9 * per_byte / 3e9)


def test_nccl_proxy_threads_stay_on_the_host_in_every_mode():
    design = rail_optimized(servers=8, dpu="bluefield-3")
    for mode in ("host", "smartnic", "dpu"):
        r = run(design, offload=mode, nccl_proxy=True)
        assert r.host_cpu["by_task"]["nccl_proxy"] > 0


def test_k8s_agents_move_to_the_dpu_arm_cores_only_with_a_dpu():
    design = rail_optimized(servers=8, dpu="bluefield-3")
    smart = run(design, offload="smartnic", k8s_agents=True)
    dpu = run(design, offload="dpu", k8s_agents=True)
    assert smart.host_cpu["by_task"]["agents"] > 0 and dpu.host_cpu["by_task"]["agents"] == 0.0
    assert dpu.dpu["arm"] > 0


def test_checkpoint_serialization_through_host_memory_bounds_the_write():
    g = ServerGroup(gpus=8, cpu_cores=112, cpu_GHz=3.0)
    inp = ResourceInputs(groups=(g,), iteration_s=1.0, parameters=70e9, checkpoint_every_iterations=100,
                         storage_read_GBps=1000, storage_write_GBps=1e5, checkpoint_via_host=True)
    r = assess(inp, FIG)
    # 70e9 x 16 B on one server, serialized by 8 writer threads at 3 GHz / 0.65 cycles per byte
    expected = 70e9 * 16 / (8 * 3e9 / FIG["checkpoint_serialize_cycles_per_byte"])
    assert r.storage.checkpoint_write_s == pytest.approx(expected)
