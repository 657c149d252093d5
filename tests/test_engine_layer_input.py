"""One layer's input (what full recomputation keeps and an offloaded layer copies) has one
function, ``workload.layer_input_bytes``, used by memory and by offload alike."""

import pytest

from designer.engine import workload as W

W70 = dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672, vocab=128256, seq_len=8192,
           tp=4, pp=1, dp=16, global_batch=128, micro_batch=2, flash_attention=True, recompute=True,
           recompute_granularity="full", sequence_parallel=True, precision="bf16", cp=2)
GPU = {"bf16_dense_tflops": 989, "gemm_efficiency": 0.7, "hbm_TBps": 3.35, "pcie_gen": 5, "memory_GB": 80}


def test_layer_input_is_s_b_h_values_split_over_cp_and_sequence_parallel_tp():
    w = W.Workload(**W70)
    assert W.layer_input_bytes(w) == 8192 / 2 * 2 * 8192 * 2 / 4


def test_memory_and_offload_both_take_the_layer_input_from_the_one_function(monkeypatch):
    w = W.Workload(**W70, offload_layers=80)
    mem = W.memory_per_gpu_GB(w)
    fwd, bwd = W.offload_s(w, GPU, 0.0, 0.0)
    monkeypatch.setattr(W, "layer_input_bytes", lambda wl: 0.0)
    # with a zero layer input, full recomputation keeps nothing per layer and offload copies nothing
    assert W.offload_s(w, GPU, 0.0, 0.0) == (0.0, 0.0) and fwd > 0 and bwd > 0
    # memory (sequence parallel: no overhead factor) drops by what the kept layer inputs were;
    # one micro-batch in flight with one stage
    kept = min(w.pp, w.micro_batches) * W.kept_layers(w)
    assert mem - W.memory_per_gpu_GB(w) == pytest.approx(kept * 8192 / 2 * 2 * 8192 * 2 / 4 / 1e9, rel=1e-9)
