"""Engine findings of the user-acceptance test: vision workloads, GPU memory, tp vs NVLink domain,
no-storage checkpoints and GPUs a preset leaves idle."""

from __future__ import annotations

import json
import math

import pytest

from designer.engine import workload as W
from designer.engine.pipeline import run
from designer.engine.timeline import TimelineInputs
from designer.errors import UsageError
from designer.topology.catalog import load_catalog
from designer.topology.templates import leaf_spine

CATALOG = load_catalog()
#: models/workloads/mlperf_storage.toml (MLPerf Storage v1.0 resnet50_h100.yaml: batch 400 /
#: computation_time 0.224 s; ImageNet-1k 1,281,167 training images, 5 epochs)
RESNET_H100_SAMPLES_PER_S = 400 / 0.224
IMAGENET_TRAIN = 1_281_167


@pytest.fixture(scope="module")
def resnet():
    return run(leaf_spine(servers=16), CATALOG, workload="resnet50-imagenet")


def test_vision_training_length_is_dataset_samples_times_epochs(resnet):
    assert resnet.tokens_per_s == 0.0
    # 128 H100s at most at the emulated rate; stragglers only slow them down a little
    assert 0.8 * 128 * RESNET_H100_SAMPLES_PER_S < resnet.samples_per_s <= 128 * RESNET_H100_SAMPLES_PER_S
    days = IMAGENET_TRAIN * 5 / resnet.samples_per_s / 86400
    assert resnet.training_time_days == pytest.approx(days)
    assert math.isfinite(resnet.energy_kwh) and resnet.energy_kwh > 0
    data = json.loads(json.dumps(resnet.to_json()))
    assert data["training_time_days"] is not None and data["energy_kwh"] is not None
    assert data["samples_per_s"] == pytest.approx(resnet.samples_per_s)


def test_vision_without_parameters_has_no_gradient_traffic(resnet):
    assert resnet.parameters == 0 and resnet.memory_per_gpu_GB is None
    assert not [c for c in resnet.collectives if c.name.startswith("dp_")]
    assert not [l for l in resnet.links if l.phase == "dp" and l.utilization > 0]
    assert any("no parameter count" in w for w in resnet.warnings)


def test_vision_with_parameters_all_reduces_its_gradients():
    # ResNet-50: 25,557,032 parameters (He et al. 2016, as counted by torchvision's resnet50)
    spec = {**CATALOG.workload("resnet50-imagenet"), "params": 25_557_032}
    r = run(leaf_spine(servers=4), CATALOG, workload=spec)
    (ar,) = [c for c in r.collectives if c.name == "dp_allreduce"]
    assert ar.bytes == pytest.approx(25_557_032 * 2)  # bf16 gradients
    # 18 bytes per parameter: bf16 weights 2, fp32 gradients 4, Adam state 12 (Megatron-LM
    # issue #654, maintainer's answer on its theoretical memory estimator)
    assert r.memory_per_gpu_GB == pytest.approx(25_557_032 * 18 / 1e9)


def test_vision_without_dataset_uses_the_documented_default():
    spec = {k: v for k, v in CATALOG.workload("resnet50-imagenet").items()
            if k not in ("dataset_samples", "epochs")}
    r = run(leaf_spine(servers=2), CATALOG, workload=spec)
    assert r.training_time_days * 86400 == pytest.approx(IMAGENET_TRAIN / r.samples_per_s)
    assert any("no dataset_samples" in w for w in r.warnings)


def test_memory_estimate_by_hand():
    # GPT, 2 layers, h 1024, 16 heads, s 1024, b 1, V 51,200, one GPU, full recomputation, scores
    # stored (no flash attention), by hand from Megatron-LM's estimator
    # (megatron/training/theoretical_memory_usage.py) and Korthikanti et al. 2023 Table 2:
    # - state: 18 bytes per parameter of the shard (all but the 1024 x 1024 position embedding,
    #   which the estimator does not count)
    # - activations: 2 layer inputs of 2·s·b·h bytes + one layer's full activations while it is
    #   recomputed, s·b·h·34 + 5·a·s²·b; the embedding's input 8·s·b and dropout s·b·h; with one
    #   stage the logits and final norm (s·b·V + s·b·h)·2; all × 1.05 for temporaries
    w = W.Workload(layers=2, hidden=1024, heads=16, seq_len=1024, tp=1, pp=1, dp=1, global_batch=1)
    sbh = 1024 * 1024
    shard = W.parameters(w) - 1024 * 1024
    acts = 2 * 2 * sbh + sbh * 34 + 5 * 16 * 1024 * 1024 + 8 * 1024 + sbh + (1024 * 51200 + sbh) * 2
    assert W.memory_per_gpu_GB(w) * 1e9 == pytest.approx(shard * 18 + acts * 1.05)
    sharded = W.Workload(layers=2, hidden=1024, heads=16, seq_len=1024, tp=1, pp=1, dp=4,
                         global_batch=4, optimizer_sharded=True)
    # the distributed optimizer keeps 12/4 of the 12 optimizer bytes ("6 + 12/d")
    assert W.memory_per_gpu_GB(sharded) * 1e9 == pytest.approx(shard * (6 + 12 / 4) + acts * 1.05)


def test_405b_on_one_stage_warns_that_it_does_not_fit():
    r = run(leaf_spine(servers=16), CATALOG, workload="llama3-405b", pp=1)
    state_GB = 405.85e9 / 8 * (4 + 12 / 16) / 1e9  # tp 8, optimizer sharded over dp 16
    assert r.memory_per_gpu_GB > state_GB > 80
    (warn,) = [w for w in r.warnings if "does not fit" in w]
    # the H100's "80 GB" are binary (workload.GPU_MEMORY_GB_BYTES): 85.9 GB of the estimate's unit
    assert "--pp" in warn and "85.9 GB (80 GiB)" in warn


def test_small_model_fits_without_warning():
    r = run(leaf_spine(servers=2), CATALOG, workload="megatron-gpt-1.7b")
    assert 0 < r.memory_per_gpu_GB < 80
    assert not [w for w in r.warnings if "does not fit" in w]


def test_tp_that_splits_servers_is_named_before_other_problems():
    with pytest.raises(UsageError) as exc:
        run(leaf_spine(servers=16), CATALOG, workload="llama3-405b", tp=3)
    msg = str(exc.value)
    assert msg.startswith("workload: tp 3 does not divide the 8 GPUs") and "heads" in msg


def test_tp_that_splits_servers_runs_with_a_warning():
    r = run(leaf_spine(servers=2), CATALOG, workload="megatron-gpt-1.7b", tp=3, dp=5, global_batch=80)
    assert any("tp 3 does not divide" in w and "network" in w for w in r.warnings)


def test_no_storage_means_no_checkpoint_write():
    r = run(leaf_spine(servers=2, storage="none"), CATALOG, workload="megatron-gpt-1.7b",
            scenario={"checkpoint_interval_s": 3600})
    assert r.storage["checkpoint_write_s"] is None
    assert r.breakdown_s["checkpoint"] == 0.0
    assert json.loads(json.dumps(r.to_json()))["storage"]["checkpoint_write_s"] is None
    assert any("checkpoints are not written" in w for w in r.warnings)
    assert TimelineInputs.from_result(r, checkpoint_interval_s=3600).checkpoint_interval_s == 0.0


def test_preset_layout_that_leaves_gpus_idle_is_a_warning():
    design = leaf_spine(servers=256, storage="none")
    r = run(design, CATALOG, workload="gpt3-175b")
    assert r.gpus == 1536
    assert any("1536 of the design's 2048 GPUs" in w and "--dp 21" in w for w in r.warnings)
    full = run(design, CATALOG, workload="gpt3-175b", dp=21, global_batch=1512)
    assert not [w for w in full.warnings if "of the design's" in w and "--dp" in w]


def test_memory_warning_is_certain_only_for_the_model_state():
    """Model state over the GPU's memory cannot fit; activations over it only may not (their
    estimate is an upper bound), and the warning says which."""
    from designer.engine.pipeline import memory_warning
    from designer.engine.workload import Workload

    w = Workload(tp=8, pp=16, dp=128)
    assert "does not fit" in memory_warning(w, need_GB=300.0, state_GB=241.0, have_GB=80.0)
    soft = memory_warning(w, need_GB=95.0, state_GB=13.0, have_GB=80.0)
    assert "may not fit" in soft and "13 GB model state" in soft and "82 GB activations" in soft
    assert "offload_layers" in soft  # activations over the memory: offloading them is a fix
    assert "offload_layers" not in memory_warning(w, need_GB=300.0, state_GB=241.0, have_GB=80.0)
