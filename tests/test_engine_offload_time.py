"""Issue #22, memory bullet: activation offload and CPU optimizer offload charged in time, each its
own part of the iteration breakdown (Megatron-Core ``cpu_offloading_num_layers`` and
``--optimizer-cpu-offload`` / ``--overlap-cpu-optimizer-d2h-h2d``); off by default."""

import json

import pytest

from designer.engine import workload as W
from designer.engine.pipeline import host_memory_per_gpu_GBps, run
from designer.engine.result import BREAKDOWN_KEYS
from designer.errors import UsageError
from designer.topology.catalog import load_catalog
from designer.topology.templates import rail_optimized

CAT = load_catalog()
H100 = CAT.get("gpu", "h100-sxm")
GB200 = CAT.get("gpu", "gb200-gpu")
#: Llama 3 8B shapes (Llama 3 paper, Table 3), data-parallel with the distributed optimizer
LLAMA8 = dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, vocab=128256, seq_len=8192,
              tp=1, pp=1, dp=8, global_batch=8, micro_batch=1, optimizer_sharded=True, flash_attention=True)


def test_off_by_default_and_nothing_charged():
    w = W.Workload(**LLAMA8)
    assert not w.optimizer_cpu_offload and w.optimizer_offload_fraction == 1.0
    assert not w.overlap_cpu_optimizer_d2h_h2d and w.offload_layers == 0
    assert W.optimizer_offload_times(w, H100, 76.8).exposed_s == 0.0
    assert W.compute(w, H100, 76.8).optimizer_offload_s == 0.0


def test_cpu_optimizer_step_is_the_copies_and_host_adam_one_after_the_other():
    w = W.Workload(**LLAMA8, optimizer_cpu_offload=True)
    n = W.params_on_busiest_gpu(w) / 8  # the distributed optimizer's shard
    t = W.optimizer_offload_times(w, H100, 76.8)
    assert t.params == pytest.approx(n)
    # fp32 each way over the H100's PCIe Gen5 x16 (50.4 GB/s achievable)
    assert t.d2h_s == pytest.approx(n * 4 / 50.4e9) and t.h2d_s == t.d2h_s
    # Adam's 28 bytes plus the copies' 8 in host memory at 76.8 GB/s per GPU
    assert t.cpu_step_s == pytest.approx(n * 36 / 76.8e9)
    assert t.exposed_s == pytest.approx(t.d2h_s + t.cpu_step_s + t.h2d_s)
    # twice the host memory bandwidth per GPU: half the CPU step, the same copies
    fast = W.optimizer_offload_times(w, H100, 153.6)
    assert fast.cpu_step_s == pytest.approx(t.cpu_step_s / 2) and fast.d2h_s == t.d2h_s
    assert t.cpu_step_s > t.d2h_s + t.h2d_s  # on a DGX H100 the host's memory, not PCIe, sets it


def test_overlap_pipelines_the_copies_with_the_step():
    seq = W.optimizer_offload_times(W.Workload(**LLAMA8, optimizer_cpu_offload=True), H100, 76.8)
    ov = W.optimizer_offload_times(W.Workload(**LLAMA8, optimizer_cpu_offload=True,
                                              overlap_cpu_optimizer_d2h_h2d=True), H100, 76.8)
    slowest = max(ov.d2h_s, ov.cpu_step_s, ov.h2d_s)
    assert slowest < ov.exposed_s < seq.exposed_s
    # filling and draining the pipeline: the largest parameter's shard (the 128256 x 4096
    # embedding / 8 ranks) copied both ways
    assert ov.exposed_s - slowest == pytest.approx(128256 * 4096 / 8 * 8 / 50.4e9)


def test_nvlink_c2c_moves_the_copies_faster_than_pcie():
    w = W.Workload(**LLAMA8, optimizer_cpu_offload=True)
    pcie, c2c = W.optimizer_offload_times(w, H100, 256.0), W.optimizer_offload_times(w, GB200, 256.0)
    assert pcie.d2h_s / c2c.d2h_s == pytest.approx(225 / 50.4)
    assert c2c.cpu_step_s == pytest.approx(pcie.cpu_step_s)  # the host's memory sets the step


def test_the_offloaded_share_of_the_optimizer_leaves_gpu_memory():
    base = W.memory_parts(W.Workload(**LLAMA8))
    half = W.memory_parts(W.Workload(**LLAMA8, optimizer_cpu_offload=True, optimizer_offload_fraction=0.5))
    full = W.memory_parts(W.Workload(**LLAMA8, optimizer_cpu_offload=True))
    assert half.optimizer == pytest.approx(base.optimizer / 2) and full.optimizer == 0.0
    assert (half.weights, half.gradients, half.activations) == (base.weights, base.gradients, base.activations)
    # the fraction alone changes nothing
    assert W.memory_parts(W.Workload(**LLAMA8, optimizer_offload_fraction=0.5)).optimizer == base.optimizer
    t_half = W.optimizer_offload_times(W.Workload(**LLAMA8, optimizer_cpu_offload=True,
                                                  optimizer_offload_fraction=0.5), H100, 76.8)
    assert t_half.exposed_s == pytest.approx(
        W.optimizer_offload_times(W.Workload(**LLAMA8, optimizer_cpu_offload=True), H100, 76.8).exposed_s / 2)


def test_a_fraction_above_one_is_refused_in_words():
    with pytest.raises(UsageError, match="optimizer_offload_fraction.*0 to 1; got 1.5"):
        W.from_dict({**LLAMA8, "optimizer_cpu_offload": True, "optimizer_offload_fraction": 1.5}, 8)


def _design(**workload):
    d = rail_optimized(servers=1, server="dgx-h100", catalog=CAT, storage="none")
    d.workload.update(preset="llama3-8b", tp=8, pp=1, **workload)
    return d


def _server(d):
    return next(c.id for c in d.topology.components.values() if c.kind == "gpu_server")


def test_the_run_charges_the_step_once_per_iteration_as_its_own_part():
    base = run(_design(), CAT)
    assert tuple(base.breakdown_s) == BREAKDOWN_KEYS  # the JSON keeps every part, zeros too
    assert base.breakdown_s["optimizer_offload"] == 0.0 == base.breakdown_s["activation_offload"]
    d = _design(optimizer_cpu_offload=True)
    host = host_memory_per_gpu_GBps(d, CAT, _server(d))
    assert host == pytest.approx(2 * 8 * 4800 * 8 / 1e3 / 8)  # 2 x Xeon 8480C, 8 DDR5-4800 each, 8 GPUs
    r = run(d, CAT)
    w = W.Workload(**r.workload)
    expected = W.optimizer_offload_times(w, H100, host).exposed_s
    assert expected > 0 and r.breakdown_s["optimizer_offload"] == pytest.approx(expected, rel=1e-12)
    assert sum(r.breakdown_s.values()) == pytest.approx(r.iteration_time_s, rel=1e-9)
    assert r.breakdown_s["compute"] == base.breakdown_s["compute"]  # compute as it was
    assert r.iteration_time_s > base.iteration_time_s + 0.9 * expected
    assert r.memory_parts_GB["optimizer"] == 0.0 < base.memory_parts_GB["optimizer"]


def test_activation_offload_beyond_compute_is_its_own_part():
    """The copies the compute does not hide leave the compute part for their own; the iteration
    is what it was when they were inside compute."""
    d = _design(offload_layers=32, recompute=False, micro_batch=1)
    r = run(d, CAT)
    w = W.Workload(**r.workload)
    ct = W.compute(w, H100)
    assert ct.offload_s > 0  # premise: 32 layers over PCIe exceed the forward and the backward
    m = w.micro_batches
    assert r.breakdown_s["activation_offload"] == pytest.approx(m * ct.offload_s, rel=1e-12)
    assert r.breakdown_s["compute"] == pytest.approx(m * (ct.micro_batch_s - ct.offload_s), rel=1e-12)
    assert sum(r.breakdown_s.values()) == pytest.approx(r.iteration_time_s, rel=1e-9)


def test_run_prints_the_offload_parts_only_when_asked(tmp_path):
    from designer.commands.run import format_table

    off, on = run(_design(), CAT), run(_design(optimizer_cpu_offload=True), CAT)
    assert "CPU optimizer step" not in format_table(off) and "Activation offload" not in format_table(off)
    (line,) = [l for l in format_table(on).splitlines() if "CPU optimizer step" in l]
    assert f"{on.breakdown_s['optimizer_offload']:.3f} s" in line
    assert json.loads(json.dumps(off.to_json()))["breakdown_s"]["optimizer_offload"] == 0.0


def test_grace_steps_at_its_measured_stream_bandwidth():
    """GB200 NVL72: 36 Grace CPUs at NVIDIA's measured STREAM TRIAD (410 GB/s each, the minimum of
    its Grace CPU Superchip reference) for 72 GPUs; x86 hosts without a measurement at their peak."""
    from designer.topology.templates import nvl72

    grace = CAT.get("cpu", "grace")
    assert grace["memory_stream_GBps"] == 410
    assert CAT.source_of("cpu", "grace", "memory_stream_GBps").startswith("measured:")
    assert grace["memory_stream_GBps"] < 512  # below the peak the channels give
    d = nvl72(servers=1, storage="none", catalog=CAT)
    sid = next(c.id for c in d.topology.components.values() if c.kind == "gpu_server")
    assert host_memory_per_gpu_GBps(d, CAT, sid) == pytest.approx(36 * 410 / 72)


def test_the_step_is_explained_by_its_printed_parts():
    """``Result.optimizer_offload`` holds the parts the breakdown's CPU optimizer step is made of,
    and ``run`` prints them under its row; nothing without offload."""
    from designer.commands.run import format_table

    assert run(_design(), CAT).optimizer_offload == {}
    r = run(_design(optimizer_cpu_offload=True), CAT)
    o = r.optimizer_offload
    assert o["overlapped"] is False and o["host_link_GBps"] == pytest.approx(50.4)
    assert o["d2h_s"] + o["cpu_step_s"] + o["h2d_s"] == pytest.approx(r.breakdown_s["optimizer_offload"], rel=1e-12)
    table = format_table(r).splitlines()
    (i,) = [k for k, l in enumerate(table) if "CPU optimizer step" in l]
    assert f"Adam on the host {o['cpu_step_s']:.3f} s" in table[i + 1] and "one after the other" in table[i + 1]
    assert json.loads(json.dumps(r.to_json()))["optimizer_offload"]["params"] == pytest.approx(o["params"])


def test_the_memory_warning_names_the_cpu_optimizer_until_it_is_used():
    from designer.engine.pipeline import memory_warning

    hard = memory_warning(W.Workload(tp=8, pp=16, dp=128), need_GB=300.0, state_GB=241.0, have_GB=80.0)
    assert "--set workload.optimizer_cpu_offload=true" in hard
    used = W.Workload(tp=8, pp=16, dp=128, optimizer_cpu_offload=True)
    assert "optimizer_cpu_offload" not in memory_warning(used, need_GB=300.0, state_GB=241.0, have_GB=80.0)
