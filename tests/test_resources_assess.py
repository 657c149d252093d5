"""The whole resources stage: host-managed vs DPU-offloaded on one design, power and energy."""

from dataclasses import replace

import pytest

from designer.engine import energy
from designer.engine.resources import ResourceInputs, ServerGroup, assess, cost_figures

FIG = cost_figures()

# 256 DGX H100-like servers on a rail-optimized fabric; encrypted tenant traffic, two tenants
# (isolation on), storage on the converged compute fabric. Per server and iteration: 150 GB of
# collective traffic moved in 0.4 s of a 6 s step (host-managed, through kernel TCP and software
# AES-GCM: 150e9 x (0.65 + 0.485) / 0.4 s / 3 GHz = 142 cores, more than the 112),
# 2 GB/s of storage fabric, 8 x 700 W GPUs.
DGX = ServerGroup(count=256, gpus=8, gpu_power_W=700, cpu_cores=112, cpu_GHz=3.0, base_power_W=3000,
                  dpus=8, adapters_power_W=8 * 150, rdma_bytes=150e9, comm_s=0.4, storage_fabric_GBps=2.0,
                  encrypt=True, isolated=True)
DESIGN = dict(iteration_s=6.0, samples_per_iteration=2048 * 4, sample_bytes=2e6,
              preprocess_core_s_per_sample=0.01, storage_read_GBps=400, storage_write_GBps=200,
              storage_converged=True, parameters=70e9, checkpoint_every_iterations=500, tenants=2,
              switch_power_W=64 * 1500, storage_power_W=20000, iterations=10000, price_per_kWh=0.1)


def both():
    host = assess(ResourceInputs(groups=(replace(DGX, scenario="host"),), **DESIGN), FIG)
    off = assess(ResourceInputs(groups=(replace(DGX, scenario="dpu"),), **DESIGN), FIG)
    return host, off


def test_offload_lowers_the_infra_share_and_the_training_time_and_names_the_reasons():
    host, off = both()
    assert host.host_cpu.infra_fraction > off.host_cpu.infra_fraction
    assert host.iteration_s > off.iteration_s
    assert host.network_extra_s > 0 and off.network_extra_s == 0
    assert host.straggler_s > off.straggler_s
    text = " ".join(host.bottlenecks)
    assert "host CPU" in text and "AES-GCM" in text and "kernel TCP" in text
    assert not any("host CPU" in b for b in off.bottlenecks)
    assert all(set(r.host_cpu.by_task) == {"network", "storage", "crypto", "virtualization",
                                           "nccl_proxy", "filesystem", "agents", "irq",
                                           "data_loading"} for r in (host, off))
    # the shares add up: infrastructure + data loading + what is left for training
    for r in (host, off):
        assert sum(r.host_cpu.by_task.values()) + r.host_cpu.training_fraction == pytest.approx(1.0)


def test_mixed_scenarios_in_one_design_wait_for_the_slowest_servers():
    mixed = assess(ResourceInputs(groups=(replace(DGX, count=128, scenario="host"),
                                          replace(DGX, count=128, scenario="dpu")), **DESIGN), FIG)
    host, off = both()
    assert mixed.network_extra_s == pytest.approx(host.network_extra_s)
    assert off.host_cpu.infra_fraction < mixed.host_cpu.infra_fraction < host.host_cpu.infra_fraction


def test_power_and_energy_of_the_run():
    host, off = both()
    per_server = 8 * 700 + 3000 + 8 * 150
    assert off.energy.power_W["total"] == pytest.approx(256 * per_server + 64 * 1500 + 20000)
    assert off.energy.iteration_kWh == pytest.approx(off.energy.power_W["total"] * off.iteration_s / 3.6e6)
    assert off.energy.run_kWh == pytest.approx(off.energy.iteration_kWh * 10000)
    assert off.energy.run_cost == pytest.approx(off.energy.run_kWh * 0.1)
    # same power, shorter iterations: the offloaded run uses less energy, more samples per kW
    assert off.energy.run_kWh < host.energy.run_kWh
    assert off.energy.samples_per_s_per_kW > host.energy.samples_per_s_per_kW
    assert energy.kwh(1000.0, 3600.0) == pytest.approx(1.0)


def test_report_is_json_ready():
    import json

    host, _ = both()
    data = json.loads(json.dumps(host.to_dict()))
    assert {"data_stall_s", "straggler_s", "checkpoint_s", "host_cpu", "dpu", "storage",
            "energy", "bottlenecks", "flags"} <= set(data)


def test_run_cost_defaults_to_the_sourced_price_and_iterations_follow_the_token_budget():
    from designer.engine.resources_adapter import run_iterations
    from designer.engine.workload import Workload

    g = replace(DGX, count=1)
    r = assess(ResourceInputs(groups=(g,), iteration_s=2.0, iterations=100), FIG)
    # models/costs/energy.toml: EIA 2023 US industrial average, 8.06 cents per kWh
    assert r.energy.run_cost == pytest.approx(r.energy.run_kWh * 0.0806)
    # 1e9 tokens in batches of 512 x 2048 tokens = 953.7 -> 954 iterations
    assert run_iterations(Workload(tokens=1e9, global_batch=512, seq_len=2048)) == 954
