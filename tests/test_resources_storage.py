"""Storage ingest demand (MLPerf Storage), achieved rate, data stall and checkpoints."""

import json
from pathlib import Path

import pytest

from designer.engine import storage
from designer.engine.resources import ResourceInputs, ServerGroup, assess, cost_figures
from designer.topology.catalog import load_catalog

REF = json.loads((Path(__file__).parent / "data" / "mlperf_storage.json").read_text())
FIG = cost_figures()


@pytest.mark.parametrize("wid", sorted(REF["workloads"]))
def test_mlperf_storage_demand_per_h100_from_presets(wid):
    ref = REF["workloads"][wid]
    w = load_catalog().workload(wid)
    rate = w[f"samples_per_s_{ref['gpu']}"]
    # one emulated H100: a step consumes one batch; the engine sees samples per iteration
    step = ref["batch_size"] / rate
    r = assess(ResourceInputs(groups=(ServerGroup(gpus=1),), iteration_s=step,
                              samples_per_iteration=ref["batch_size"],
                              sample_bytes=w["bytes_per_sample"], storage_read_GBps=100), FIG)
    assert r.storage.read_demand_GBps == pytest.approx(ref["demand_GBps_per_gpu"], rel=REF["tolerance"])
    assert storage.read_demand_Bps(rate, w["bytes_per_sample"]) / 1e9 == pytest.approx(
        ref["demand_GBps_per_gpu"], rel=REF["tolerance"])


def test_converged_fabric_leaves_storage_the_time_collectives_do_not_use():
    assert storage.converged_fabric_Bps(10e9, 0.3, 1.0) == pytest.approx(7e9)
    assert storage.converged_fabric_Bps(10e9, 2.0, 1.0) == 0.0


def test_read_is_limited_by_the_smallest_path_element_and_stalls():
    # 16 servers read 64 GB per 1 s step: 4 GB each; storage gives 32 GB/s = 2 GB/s per server
    g = ServerGroup(count=16, scenario="dpu", dpus=8, gpudirect_storage=True, storage_fabric_GBps=50)
    inp = ResourceInputs(groups=(g,), iteration_s=1.0, samples_per_iteration=64,
                         sample_bytes=1e9, storage_read_GBps=32)
    r = assess(inp, FIG)
    assert r.groups[0].read_limit == "storage target"
    assert r.data_stall_s == pytest.approx(4 / 2 - 1.0)
    assert r.storage.read_demand_GBps == pytest.approx(64)
    assert r.storage.read_achieved_GBps == pytest.approx(32)
    assert any("storage target" in b for b in r.bottlenecks)


def test_converged_fabric_shares_links_with_training_traffic():
    # fabric gives 3 GB/s per server, collectives hold the links 60% of the step: 1.2 GB/s left
    g = ServerGroup(count=4, scenario="dpu", dpus=8, gpudirect_storage=True, storage_fabric_GBps=3,
                    rdma_bytes=1e9, comm_s=0.6)
    base = dict(groups=(g,), iteration_s=1.0, samples_per_iteration=8, sample_bytes=1e9,
                storage_read_GBps=1000)
    sep = assess(ResourceInputs(**base), FIG)
    conv = assess(ResourceInputs(**base, storage_converged=True), FIG)
    assert sep.groups[0].read_achieved_GBps == pytest.approx(3.0)
    assert conv.groups[0].read_achieved_GBps == pytest.approx(1.2)
    assert conv.data_stall_s == pytest.approx(2 / 1.2 - 1.0)
    assert any("converged fabric" in b for b in conv.bottlenecks)


def test_checkpoint_size_write_time_and_amortization():
    # 70e9 parameters x 16 B = 1.12 TB over 100 GB/s of storage writes = 11.2 s, every 100 steps
    g = ServerGroup(count=16, scenario="dpu", dpus=8)
    r = assess(ResourceInputs(groups=(g,), iteration_s=1.0, parameters=70e9, storage_write_GBps=100,
                              checkpoint_every_iterations=100), FIG)
    assert FIG["checkpoint_bytes_per_param"] == 16
    assert r.storage.checkpoint_GB == pytest.approx(1120)
    assert r.storage.checkpoint_write_s == pytest.approx(11.2)
    assert r.checkpoint_s == pytest.approx(0.112)
    assert storage.amortized_checkpoint_s(11.2, 0) == 0.0
